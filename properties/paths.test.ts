/**
 * The SDK's path resolution (`sdk/src/contract/paths.ts`, pure functions of the agent's rules) against Node's own `path`
 * rules, for POSIX and win32 agents, on random paths built from a pool of troublesome segments.
 *
 * POSIX is also checked against the reference env's `absolutePath` on this machine. For win32, the expected
 * value is computed with Node's `path.win32` while `process.cwd()` and the per-drive `=X:` variables are swapped
 * for the agent's (Node reads both at call time), so the SDK's reimplementation of drive-relative resolution is
 * compared with Node's real code rather than with a second model.
 */
import { homedir } from "node:os";
import { posix, win32 } from "node:path";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import fc from "fast-check";
import { expect } from "vitest";
import { joinOnAgent, type PathRules, resolveEnvPath } from "../sdk/src/contract/paths.js";
import { asWindowsAgent, nodeResolve } from "../sdk/test/fixtures/node-paths.js";
import { propertyTest } from "./harness.js";

const BASE_RUNS = 500;
const BASE_TIME_MS = 8_000;

/** Pieces concatenated into paths: separators of both kinds, dots, tilde, drives, UNC parts, URL parts. */
const SEGMENTS = [
  "a",
  "b",
  "é",
  "..",
  ".",
  "~",
  "",
  "C:",
  "c:",
  "D:",
  "\\",
  "/",
  "//",
  "server",
  "share",
  "file://",
  "file:///",
  "localhost",
  "%20",
  "%2F",
  "%E2%82",
  "?q=1",
  "#f",
] as const;

const pathArb = fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 8 }).map((parts) => parts.join(""));

const posixRules: PathRules = { os: "linux", home: homedir(), cwd: process.cwd(), driveCwds: {} };

const posixCwdArb = fc.oneof(
  pathArb.map((path) => `/${path}`),
  pathArb,
  fc.constantFrom("/", "/tmp/work", "rel/dir", ""),
);

const posixName = "SDK path resolution equals Node and the reference env for POSIX agents";
propertyTest(
  posixName,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(posixCwdArb, pathArb, fc.array(pathArb, { maxLength: 4 }), async (cwd, path, parts) => {
      const expected = nodeResolve(posix, false, posixRules.home, cwd, path);
      expect(resolveEnvPath(posixRules, cwd, path)).toBe(expected);
      const reference = await new NodeExecutionEnv({ cwd }).absolutePath(path, { abortSignal: undefined });
      expect(reference).toEqual({ ok: true, value: expected });
      expect(joinOnAgent(posixRules, parts)).toBe(posix.join(...parts));
    }),
  {
    describe: ([cwd, path, parts]) =>
      `  cwd ${JSON.stringify(cwd)}, path ${JSON.stringify(path)}, join ${JSON.stringify(parts)}`,
  },
);

const windowsRulesArb: fc.Arbitrary<PathRules> = fc.record({
  os: fc.constant("windows"),
  home: fc.constantFrom("C:\\Users\\me", "D:\\home"),
  cwd: fc.constantFrom("C:\\work", "D:\\", "\\\\server\\share\\dir", "c:\\lower"),
  driveCwds: fc.dictionary(
    fc.constantFrom("C:", "D:", "E:"),
    fc.constantFrom("C:\\x", "D:\\y\\z", "E:\\", "Q:\\other"),
    {
      maxKeys: 3,
    },
  ),
});

const windowsCwdArb = fc.oneof(
  pathArb,
  fc.constantFrom("C:\\work", "D:", "d:\\dir\\", "\\\\server\\share", "rel\\dir", ""),
);

const windowsName = "SDK path resolution equals Node's path.win32 for Windows agents";
propertyTest(
  windowsName,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(
      windowsRulesArb,
      windowsCwdArb,
      pathArb,
      fc.array(pathArb, { maxLength: 4 }),
      async (rules, cwd, path, parts) => {
        const expected = asWindowsAgent(rules, () => nodeResolve(win32, true, rules.home, cwd, path));
        expect(resolveEnvPath(rules, cwd, path)).toBe(expected);
        expect(joinOnAgent(rules, parts)).toBe(win32.join(...parts));
      },
    ),
  {
    describe: ([rules, cwd, path, parts]) =>
      `  rules ${JSON.stringify(rules)}\n  cwd ${JSON.stringify(cwd)}, path ${JSON.stringify(path)}, join ${JSON.stringify(parts)}`,
  },
);
