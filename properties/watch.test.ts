/**
 * Watching never misses (WA12): random trees, random targets (recursive or not, with random exclusions) and random
 * file-system mutations under a live watcher, in native and polling (100 ms) mode. Once the tree is quiet:
 * - every path that really changed (its kind, inode, size or content differs between before and after) and that a
 *   target covers is covered by some reported path (itself or a directory above it) or by an overflow;
 * - nothing excluded is reported, and every reported path is at or below a target.
 * Mutations are made with `node:fs` on this machine, next to every env's files, so they do not depend on the env.
 *
 * Phase 1 waits (event-driven, at most 3 s) for the changed paths to be covered WITHOUT provoking a rescan, so a
 * missing native watcher shows up as a miss. Phase 2 writes a sentinel (a separate target) and waits for it: the
 * rescan that reports it ran after every mutation, so any excluded report would have arrived by then.
 */
import { createHash } from "node:crypto";
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, sep } from "node:path";
import {
  Connection,
  type ExecutionEnv,
  LocalExecutionEnv,
  packagedAgent,
  RemoteExecutionEnv,
  type WatchChange,
  type WatchTarget,
} from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import fc from "fast-check";
import { afterAll } from "vitest";
import { markedArgv, markerEnv } from "../spec/test/processes.js";
import { propertyTest } from "./harness.js";
import { processMarker, propertyFixture } from "./targets.js";

const BASE_RUNS = 60;
const BASE_TIME_MS = 25_000;
/** Longest wait for the changed paths to be reported (the conformance cases' per-expectation wait). */
const EXPECT_MS = 3000;
const LIVE = { abortSignal: undefined };
const SENTINEL = "zz-sentinel.txt";

type Mode = "native" | "polling";
interface WatchOptions {
  mode: Mode;
  pollIntervalMs?: number;
}

/** An env that watches, made per run with the run's watch options. */
interface Watching {
  readonly name: string;
  open(root: string, watch: WatchOptions): ExecutionEnv;
  dispose(env: ExecutionEnv): Promise<void>;
  close(): Promise<void>;
}

const markedShellEnv = markerEnv(processMarker);

function referenceWatching(): Watching {
  return {
    name: "reference NodeExecutionEnv",
    open: (root, watch) => new NodeExecutionEnv({ cwd: root, shellEnv: markedShellEnv, watch }),
    dispose: async () => {},
    close: async () => {},
  };
}

function localWatching(): Watching {
  return {
    name: "LocalExecutionEnv",
    open: (root, watch) => {
      const options = { cwd: root, shellEnv: markedShellEnv, watch };
      return new LocalExecutionEnv(options);
    },
    dispose: async (env) => {
      await (env as LocalExecutionEnv).close();
    },
    close: async () => {},
  };
}

function remoteWatching(): Watching {
  let connection: Connection | undefined;
  return {
    name: "RemoteExecutionEnv over a pipe",
    open: (root, watch) => {
      connection ??= new Connection({
        command: markedArgv(processMarker, ["sh", "-c", 'exec "$0" "$@"', packagedAgent()]),
      });
      const options = { connection, id: "outpost:properties", cwd: root, shellEnv: markedShellEnv, watch };
      return new RemoteExecutionEnv(options);
    },
    dispose: async () => {},
    close: async () => {
      await connection?.close();
      connection = undefined;
    },
  };
}

const fixture = propertyFixture([]);
const subjects = [referenceWatching(), localWatching(), remoteWatching()];

// ---- the model ------------------------------------------------------------------------------------------------

/** Names the trees, targets and mutations are made of: plain, hidden, and one that exclusions may name. */
const NAMES = ["a", "b", ".h", "nm"] as const;
const relPath = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"));

interface TargetSpec {
  path: string;
  recursive: boolean;
  hidden: boolean;
  names: string[];
}

type Op =
  | { op: "write"; path: string; content: string }
  | { op: "append"; path: string }
  | { op: "remove"; path: string }
  | { op: "mkdir"; path: string }
  | { op: "rename"; from: string; to: string }
  | { op: "pause"; ms: number };

const content = fc.constantFrom("", "x", "y", "xy", "hello");

/** Paths biased toward the initial tree (its files and their directories), so mutations hit watched entries. */
function pathsNear(initial: readonly { path: string }[]): fc.Arbitrary<string> {
  const near = [
    ...new Set(initial.flatMap(({ path }) => path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/")))),
  ];
  return near.length === 0 ? relPath : fc.oneof(relPath, fc.constantFrom(...near));
}

function targetSpec(path: fc.Arbitrary<string>): fc.Arbitrary<TargetSpec> {
  return fc.record({ path, recursive: fc.boolean(), hidden: fc.boolean(), names: fc.subarray(["nm", "b"]) });
}

function operation(path: fc.Arbitrary<string>): fc.Arbitrary<Op> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant("write" as const), path, content }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("append" as const), path }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("remove" as const), path }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("mkdir" as const), path }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("rename" as const), from: path, to: path }) },
    // Pauses let rescans run between mutations, so a later mutation must be seen by the watchers alone.
    { weight: 3, arbitrary: fc.record({ op: fc.constant("pause" as const), ms: fc.integer({ min: 0, max: 120 }) }) },
  );
}

const scenario = fc
  .record({
    mode: fc.constantFrom<Mode>("native", "polling"),
    initial: fc.array(fc.record({ path: relPath, content }), { maxLength: 6 }),
  })
  .chain(({ mode, initial }) => {
    const path = pathsNear(initial);
    return fc.record({
      mode: fc.constant(mode),
      initial: fc.constant(initial),
      targets: fc.array(targetSpec(path), { minLength: 1, maxLength: 3 }),
      ops: fc.array(operation(path), { minLength: 1, maxLength: 10 }),
    });
  });
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** Runs `action`, ignoring the failures random mutations produce (a parent that is a file, a missing source …). */
function attempt(action: () => void): void {
  try {
    action();
  } catch {
    // Expected for random mutations.
  }
}

async function apply(root: string, op: Op): Promise<void> {
  const at = (path: string) => join(root, path);
  switch (op.op) {
    case "write":
      attempt(() => {
        mkdirSync(dirname(at(op.path)), { recursive: true });
        writeFileSync(at(op.path), op.content);
      });
      return;
    case "append":
      attempt(() => appendFileSync(at(op.path), "+"));
      return;
    case "remove":
      attempt(() => rmSync(at(op.path), { recursive: true, force: true }));
      return;
    case "mkdir":
      attempt(() => mkdirSync(at(op.path), { recursive: true }));
      return;
    case "rename":
      attempt(() => renameSync(at(op.from), at(op.to)));
      return;
    case "pause":
      await new Promise((resolve) => setTimeout(resolve, op.ms));
      return;
  }
}

/** What a path holds, for "really changed": kind, inode, and for files size and content. */
function state(root: string): Map<string, string> {
  const states = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (path === join(root, SENTINEL)) continue;
      const stats = lstatSync(path);
      if (stats.isDirectory()) {
        states.set(path, `dir ${stats.ino}`);
        walk(path);
      } else if (stats.isFile()) {
        const hash = createHash("sha256").update(readFileSync(path)).digest("hex");
        states.set(path, `file ${stats.ino} ${stats.size} ${hash}`);
      } else {
        states.set(path, `other ${stats.ino}`);
      }
    }
  };
  walk(root);
  return states;
}

/** Path components of `path` below `base`, or undefined when it is not at or below it. */
function below(path: string, base: string): string[] | undefined {
  if (path === base) return [];
  if (!path.startsWith(base + sep)) return undefined;
  return path.slice(base.length + 1).split(sep);
}

function excludedName(target: TargetSpec, name: string): boolean {
  return (target.hidden && name.startsWith(".")) || target.names.includes(name);
}

/** Whether `path` is one a target must report a change of: the target, or an entry it covers and does not exclude. */
function watchedBy(root: string, target: TargetSpec, path: string): boolean {
  const components = below(path, join(root, target.path));
  if (components === undefined) return false;
  if (!target.recursive && components.length > 1) return false;
  return !components.some((name) => excludedName(target, name));
}

/**
 * Whether reporting `path` would break an exclusion: below some target, every target covering it excludes it, and it
 * is no other target's ancestor (a changed ancestor inside a target is reported as itself, WA7).
 */
function excludedEverywhere(root: string, targets: readonly TargetSpec[], path: string): boolean {
  if (targets.some((target) => below(join(root, target.path), path) !== undefined)) return false;
  const covering = targets.filter((target) => below(path, join(root, target.path)) !== undefined);
  return (
    covering.length > 0 &&
    covering.every((target) => (below(path, join(root, target.path)) ?? []).some((name) => excludedName(target, name)))
  );
}

function coveredBy(changes: readonly WatchChange[], path: string): boolean {
  return changes.some(
    (change) =>
      "overflow" in change ||
      ("paths" in change && change.paths.some((reported) => reported === path || path.startsWith(reported + sep))),
  );
}

/** Waits until `done()` holds, re-checking on every delivery; gives up after `ms`. */
async function waitUntil(done: () => boolean, wakeUps: (() => void)[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      wakeUps.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return true;
}

/** One run: returns a description of what went wrong, or undefined. */
async function check(subject: Watching, run: Scenario): Promise<string | undefined> {
  const root = fixture.sandbox.root("watch");
  for (const file of run.initial) {
    await apply(root, { op: "write", path: file.path, content: file.content });
  }
  const env = subject.open(
    root,
    run.mode === "polling" ? { mode: "polling", pollIntervalMs: 100 } : { mode: "native" },
  );
  const changes: WatchChange[] = [];
  const wakeUps: (() => void)[] = [];
  const targets: WatchTarget[] = [
    ...run.targets.map((target) => ({
      path: target.path,
      recursive: target.recursive,
      exclude: { hidden: target.hidden, names: target.names },
    })),
    { path: SENTINEL },
  ];
  try {
    const opened = await env.watch(
      targets,
      (change) => {
        changes.push(change);
        for (const wake of wakeUps.splice(0)) wake();
      },
      LIVE,
    );
    if (!opened.ok) return `watch failed: ${opened.error.code} ${opened.error.message}`;
    const watcher = opened.value;
    try {
      if (watcher.mode !== run.mode) return `mode ${watcher.mode}, expected ${run.mode}`;
      const before = state(root);
      for (const op of run.ops) await apply(root, op);
      const after = state(root);
      const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
        (path) => before.get(path) !== after.get(path),
      );
      const required = changed.filter((path) => run.targets.some((target) => watchedBy(root, target, path)));
      const missing = () => required.filter((path) => !coveredBy(changes, path));
      await waitUntil(() => missing().length === 0, wakeUps, EXPECT_MS);
      if (missing().length > 0) {
        return `missed ${JSON.stringify(missing())}; changes ${JSON.stringify(changes)}`;
      }
      const sentinel = join(root, SENTINEL);
      writeFileSync(sentinel, "quiet");
      if (!(await waitUntil(() => coveredBy(changes, sentinel), wakeUps, EXPECT_MS))) {
        return `the sentinel was not reported; changes ${JSON.stringify(changes)}`;
      }
      const reported = changes.flatMap((change) => ("paths" in change ? change.paths : []));
      const excluded = reported.filter((path) => excludedEverywhere(root, run.targets, path));
      if (excluded.length > 0) return `excluded paths reported: ${JSON.stringify(excluded)}`;
      const stray = reported.filter(
        (path) => path !== sentinel && !run.targets.some((target) => below(path, join(root, target.path))),
      );
      if (stray.length > 0) return `paths outside every target reported: ${JSON.stringify(stray)}`;
      const errors = changes.filter((change) => "error" in change);
      if (errors.length > 0) return `errors delivered: ${JSON.stringify(errors)}`;
      return undefined;
    } finally {
      await watcher.close(LIVE);
    }
  } finally {
    await subject.dispose(env);
    fixture.sandbox.drop(root);
  }
}

for (const subject of subjects) {
  const name = `${subject.name}: watchers report every real change under random mutations, and nothing excluded`;
  propertyTest(
    name,
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS, fixedMs: 60_000 },
    () =>
      fc.asyncProperty(scenario, async (run) => {
        const problem = await check(subject, run);
        if (problem !== undefined) throw new Error(problem);
      }),
    {
      runTimeoutMs: 20_000,
      describe: ([run]) => JSON.stringify(run, null, 1),
    },
  );
}

// The subjects' agents stop before the fixture checks that nothing outlived the file (hooks run in reverse order).
afterAll(async () => {
  for (const subject of subjects) await subject.close();
});
