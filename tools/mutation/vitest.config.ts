/**
 * The tests Stryker runs against each mutant of sdk/src: every test of sdk/test (unit tests, and end-to-end tests
 * against the real agent and a loopback sshd), the conformance suite against LocalExecutionEnv (real agent) and the
 * path resolution property. Left out: the conformance suite against RemoteExecutionEnv (LocalExecutionEnv is a
 * RemoteExecutionEnv over a Connection that spawns the agent, so a second pass runs the same sdk/src code again and
 * doubles the cost of every surviving mutant; RemoteExecutionEnv's own options have tests in sdk/test), the
 * conformance suite over SSH (minutes; ssh.e2e.test.ts covers the SSH code), dist.test.ts (it tests the built
 * package, which Stryker does not rebuild) and a test that cannot run under Stryker (below).
 */
import { configDefaults, defineConfig } from "vitest/config";
import base from "../../vitest.config.js";
import { slowTests, sshSlowTests } from "./slow-tests.js";

const core = process.env.OUTPOST_MUTATION_GROUP === "core";
const leftOut = [
  "applies the connection's requestTimeoutMs to every request but exec and watch",
  // Each run leaves out its slowest tests (slow-tests.ts).
  ...(core ? slowTests : sshSlowTests),
];
const literally = (title: string) => title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      "sdk/test/**/*.test.ts",
      "spec/test/conformance-local.test.ts",
      // Pure and fast: path resolution against Node's own path module on random inputs.
      "properties/paths.test.ts",
    ],
    exclude: [
      ...configDefaults.exclude,
      "sdk/test/dist.test.ts",
      // run.sh mutates sdk/src/ssh apart from the rest; the rest leaves out the loopback-sshd test (25 s), which
      // would otherwise run again for every surviving mutant of the code it shares with the conformance suite.
      ...(core ? ["sdk/test/ssh.e2e.test.ts"] : []),
    ],
    // Left out: a test that gives the fake agent 100 ms to answer hello, which it misses on a loaded machine (its
    // subject, request deadlines, has other tests). Tests that set HOME run: Stryker's runner forces worker threads,
    // whose HOME os.homedir() does not see, so the SSH code reads the home through localHome() (ssh-config.ts).
    testNamePattern: new RegExp(`^(?!.*(${leftOut.map(literally).join("|")}))`),
    // A mutant that makes a request hang fails its first test at the timeout; the slowest test takes 7 s here.
    testTimeout: 15_000,
    hookTimeout: 15_000,
  },
});
