/**
 * The SDK's path resolution (`sdk/src/paths.ts`, pure functions of the agent's rules) against Node's own `path`
 * rules, for POSIX and win32 agents, on random paths built from a pool of troublesome segments.
 *
 * POSIX is also checked against the reference env's `absolutePath` on this machine. For win32, the expected
 * value is computed with Node's `path.win32` while `process.cwd()` and the per-drive `=X:` variables are swapped
 * for the agent's (Node reads both at call time), so the SDK's reimplementation of drive-relative resolution is
 * compared with Node's real code rather than with a second model.
 */
import { homedir } from "node:os";
import { posix, win32 } from "node:path";
import { fileURLToPath } from "node:url";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import fc from "fast-check";
import { expect, it } from "vitest";
import { joinOnAgent, type PathRules, resolveEnvPath } from "../sdk/src/paths.js";
import { checkProperty, numRuns, testTimeout } from "./harness.js";

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

/** Node's rule on the env's machine, given that machine's `path` flavour and home. */
function nodeResolve(api: typeof posix, windows: boolean, home: string, cwd: string, path: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/") || (windows && path.startsWith("~\\"))) return api.join(home, path.slice(2));
  let local = path;
  if (path.startsWith("file://")) {
    try {
      local = fileURLToPath(path, { windows });
    } catch {
      local = path;
    }
  }
  return api.isAbsolute(local) ? api.resolve(local) : api.resolve(cwd, local);
}

/** Runs `compute` while Node's `path.win32` sees the agent's cwd and per-drive cwds (case-insensitive, like Windows). */
function asWindowsAgent<T>(rules: PathRules, compute: () => T): T {
  const savedCwd = process.cwd;
  const savedEnv = process.env;
  const drives = Object.fromEntries(
    Object.entries(rules.driveCwds).map(([drive, dir]) => [`=${drive.toUpperCase()}`, dir]),
  );
  process.cwd = () => rules.cwd;
  process.env = new Proxy(drives, {
    get: (target, key) => (typeof key === "string" ? target[key.toUpperCase()] : undefined),
  });
  try {
    return compute();
  } finally {
    process.cwd = savedCwd;
    process.env = savedEnv;
  }
}

const posixRules: PathRules = { os: "linux", home: homedir(), cwd: process.cwd(), driveCwds: {} };

const posixCwdArb = fc.oneof(
  pathArb.map((path) => `/${path}`),
  pathArb,
  fc.constantFrom("/", "/tmp/work", "rel/dir", ""),
);

const posixName = "SDK path resolution equals Node and the reference env for POSIX agents";
it(
  posixName,
  async () => {
    const property = fc.asyncProperty(
      posixCwdArb,
      pathArb,
      fc.array(pathArb, { maxLength: 4 }),
      async (cwd, path, parts) => {
        const expected = nodeResolve(posix, false, posixRules.home, cwd, path);
        expect(resolveEnvPath(posixRules, cwd, path)).toBe(expected);
        const reference = await new NodeExecutionEnv({ cwd }).absolutePath(path, { abortSignal: undefined });
        expect(reference).toEqual({ ok: true, value: expected });
        expect(joinOnAgent(posixRules, parts)).toBe(posix.join(...parts));
      },
    );
    await checkProperty(property, {
      name: posixName,
      numRuns: numRuns(BASE_RUNS),
      timeLimitMs: testTimeout(BASE_TIME_MS, 0),
      describe: ([cwd, path, parts]) =>
        `  cwd ${JSON.stringify(cwd)}, path ${JSON.stringify(path)}, join ${JSON.stringify(parts)}`,
    });
  },
  testTimeout(BASE_TIME_MS),
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
it(
  windowsName,
  async () => {
    const property = fc.asyncProperty(
      windowsRulesArb,
      windowsCwdArb,
      pathArb,
      fc.array(pathArb, { maxLength: 4 }),
      async (rules, cwd, path, parts) => {
        const expected = asWindowsAgent(rules, () => nodeResolve(win32, true, rules.home, cwd, path));
        expect(resolveEnvPath(rules, cwd, path)).toBe(expected);
        expect(joinOnAgent(rules, parts)).toBe(win32.join(...parts));
      },
    );
    await checkProperty(property, {
      name: windowsName,
      numRuns: numRuns(BASE_RUNS),
      timeLimitMs: testTimeout(BASE_TIME_MS, 0),
      describe: ([rules, cwd, path, parts]) =>
        `  rules ${JSON.stringify(rules)}\n  cwd ${JSON.stringify(cwd)}, path ${JSON.stringify(path)}, join ${JSON.stringify(parts)}`,
    });
  },
  testTimeout(BASE_TIME_MS),
);
