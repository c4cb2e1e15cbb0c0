/**
 * The `ExecutionEnv` conformance suite: runner-independent cases that any env must pass to behave like Durable's
 * `NodeExecutionEnv`. `createConformanceCases` returns the cases; `registerConformance` hands them to a
 * vitest/jest-like runner. Cases throw `node:assert` errors on failure.
 */
import { abortCases } from "./abort.js";
import { abortInFlightCases } from "./abort-in-flight.js";
import { anchorCases } from "./anchors.js";
import { dirCases } from "./dirs.js";
import { errorCases } from "./errors.js";
import { execCases } from "./exec.js";
import { listFilesCases } from "./list-files.js";
import { metadataCases } from "./metadata.js";
import { pathCases } from "./paths.js";
import { permissionCases, withPermissions } from "./permissions.js";
import { readCases } from "./read.js";
import { readerCases } from "./readers.js";
import { searchFilesCases } from "./search-files.js";
import { specialFileCases } from "./special-files.js";
import { spillCases } from "./spill.js";
import { tempCases } from "./temp.js";
import type { ConformanceCase, ConformanceOptions, Define, Setup, TestRunner } from "./types.js";
import { watchCases } from "./watch.js";
import { watchConnectionCases } from "./watch-connection.js";
import { windowCases } from "./window.js";
import { windowsCases } from "./windows.js";
import { writeCases } from "./write.js";

export { expectedScan, scanSample } from "./line-scan-model.js";
export type { ConformanceCase, ConformanceOptions, EnvSettings, TestRunner } from "./types.js";

/** Why a case that needs denied permissions does not run on a target without them. */
const permissionsSkip =
  "file permissions do not apply to the target's user (root): needs ConformanceOptions.permissions";

/** Default time of one case, unless it says otherwise. */
const defaultTimeoutMs = 15_000;

/** The case modules, in the order their cases are listed. */
const modules = [
  pathCases,
  readCases,
  readerCases,
  writeCases,
  metadataCases,
  dirCases,
  tempCases,
  errorCases,
  abortCases,
  abortInFlightCases,
  specialFileCases,
  execCases,
  spillCases,
  windowCases,
  watchCases,
  permissionCases,
  watchConnectionCases,
  listFilesCases,
  searchFilesCases,
  windowsCases,
  anchorCases,
];

function withDefaults(options: ConformanceOptions): Setup {
  return {
    withEnv: options.withEnv,
    shell: options.shell ?? ["sh", "-c"],
    symlinks: options.symlinks ?? true,
    fifos: options.fifos ?? true,
    nonUtf8Names: options.nonUtf8Names ?? true,
    linux: options.linux ?? true,
    largeFileMiB: Math.max(options.largeFileMiB ?? 20, 1),
    listFiles: options.listFiles ?? false,
    searchFiles: options.searchFiles ?? options.listFiles ?? false,
    windows: options.windows ?? false,
    permissions: options.permissions ?? false,
  };
}

/** Builds every case for a target; each case gets its own env through `options.withEnv`. */
export function createConformanceCases(options: ConformanceOptions): ConformanceCase[] {
  const setup = withDefaults(options);
  const cases: ConformanceCase[] = [];
  const define: Define = (name, rule, body, extra = {}) => {
    if (cases.some((existing) => existing.name === name)) throw new Error(`duplicate conformance case: ${name}`);
    const skip = extra.skip ?? (extra.permissions && !setup.permissions ? permissionsSkip : undefined);
    const run = extra.permissions ? withPermissions(setup, body) : body;
    cases.push({
      name,
      rule,
      timeoutMs: extra.timeoutMs ?? defaultTimeoutMs,
      ...(skip !== undefined ? { skip } : {}),
      ...(extra.permissions ? { permissions: true as const } : {}),
      run: () => setup.withEnv(run, extra.settings),
    });
  };
  for (const register of modules) register(setup, define);
  return cases;
}

/**
 * Registers every case as a test of `runner` under `describe(title)`; with `select`, only the cases it accepts
 * (e.g. `(c) => c.permissions === true` for a pass as an unprivileged user).
 */
export function registerConformance(
  runner: TestRunner,
  title: string,
  options: ConformanceOptions,
  select: (testCase: ConformanceCase) => boolean = () => true,
): void {
  const cases = createConformanceCases(options).filter(select);
  runner.describe(title, () => {
    for (const testCase of cases) {
      const label = testCase.rule ? `${testCase.name} [${testCase.rule}]` : testCase.name;
      if (testCase.skip === undefined) runner.it(label, () => testCase.run(), testCase.timeoutMs);
      else if (runner.it.skip) runner.it.skip(`${label} (skipped: ${testCase.skip})`, () => testCase.run());
      else throw new Error(`conformance: the runner cannot skip "${label}" (${testCase.skip}); give it.skip`);
    }
  });
}
