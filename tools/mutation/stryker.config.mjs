// Stryker's settings for `make mutation` (tools/mutation/run.sh passes the files to mutate with --mutate).
// The tests are the SDK's own and the conformance suite against the real agent (tools/mutation/vitest.config.ts);
// coverage is measured per test, so each mutant runs only the tests that reach its code.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "tools/mutation/vitest.config.ts", related: false },
  coverageAnalysis: "perTest",
  // The sandbox and the caches live under .cache (ignored by git and Biome).
  tempDirName: ".cache/stryker-tmp",
  incremental: true,
  incrementalFile: ".cache/mutation/stryker-incremental.json",
  ignorePatterns: [".cache", "dist", "coverage", "**/*.log", "integrations", "cli"],
  // checkpoint (checkpoint-reporter.mjs) saves results into the incremental file while the run goes.
  // error-messages (message-ignorer.mjs) leaves the text of error messages unmutated.
  plugins: [
    "@stryker-mutator/vitest-runner",
    "./tools/mutation/checkpoint-reporter.mjs",
    "./tools/mutation/message-ignorer.mjs",
  ],
  ignorers: ["error-messages"],
  reporters: ["clear-text", "json", "progress-append-only", "checkpoint"],
  jsonReporter: { fileName: ".cache/mutation/stryker-report.json" },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  concurrency: 2,
  timeoutMS: 20000,
  // The initial run is the whole selection of tests with coverage; on a loaded machine it takes minutes.
  dryRunTimeoutMinutes: 30,
  timeoutFactor: 2,
  thresholds: { high: 80, low: 60, break: null },
};
