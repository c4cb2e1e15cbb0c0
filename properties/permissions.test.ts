/**
 * Differential sequences under denied permissions: each run makes a small tree, gives some of its entries modes
 * from the permission pool (unreadable, read-only, search-only, write-only), then runs a random operation sequence
 * (the sequences property's model) on the reference and on each Outpost env, each in a fresh root; the normalized
 * traces must be equal, step for step. The modes deny root nothing, so the property runs only for a user they
 * deny: `make test-unprivileged` runs it so (and fails if it is skipped). Small fixed budget.
 */
import { chmodSync, type Dirent, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect } from "vitest";
import { propertyTest } from "./harness.js";
import { describeDifference, describeOp, newState, type Op, runSequence, type Step, sequenceArbitrary } from "./ops.js";
import { PERMISSION_MODES, PERMISSION_PATHS } from "./pools.js";
import { propertyFixture, type Target } from "./targets.js";

const MAX_OPS = 10;
const BASE_RUNS = 40;
const BASE_TIME_MS = 20_000;
const OP_DEADLINE_MS = 15_000;

type Modes = (number | undefined)[];

const fixture = propertyFixture();
const { reference, targets } = fixture;

/** The tree every run starts from (before the sequence's own prelude), then the drawn modes. */
function makeTree(root: string, modes: Modes): void {
  mkdirSync(join(root, "dir", "sub"), { recursive: true });
  writeFileSync(join(root, "a.txt"), "a\n");
  writeFileSync(join(root, "b"), "b");
  writeFileSync(join(root, "dir", "c.txt"), "c");
  writeFileSync(join(root, "dir", "sub", "d.bin"), Uint8Array.of(0, 1));
  // Deepest first, so an unsearchable directory does not hide the entries below it from chmod.
  for (let index = PERMISSION_PATHS.length - 1; index >= 0; index--) {
    const mode = modes[index];
    if (mode !== undefined) chmodSync(join(root, PERMISSION_PATHS[index]), mode);
  }
}

/**
 * Gives every directory below `dir` its permissions back (wherever the sequence moved it), so the sandbox can
 * remove it; symbolic links are not followed.
 */
function reopen(dir: string): void {
  try {
    chmodSync(dir, 0o700);
  } catch {
    return; // a sequence may have removed or replaced it
  }
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory()) reopen(join(dir, entry.name));
}

/** Runs a sequence on one target in a fresh root with the tree and modes; returns its normalized trace. */
async function trace(
  target: Target,
  modes: Modes,
  ops: readonly Op[],
  label: string,
  messages = false,
): Promise<Step[]> {
  const root = fixture.sandbox.root(label);
  makeTree(root, modes);
  const state = newState(target.at(root), root, fixture.sandbox.normalizer(root, { messages }));
  try {
    return await runSequence(state, ops, OP_DEADLINE_MS);
  } finally {
    reopen(root);
    fixture.sandbox.drop(root);
  }
}

const modesArbitrary = fc.array(fc.constantFrom(...PERMISSION_MODES), {
  minLength: PERMISSION_PATHS.length,
  maxLength: PERMISSION_PATHS.length,
});

const render = (modes: Modes, ops: readonly Op[]) =>
  [
    `modes: ${PERMISSION_PATHS.map((path, index) => `${path}=${modes[index]?.toString(8) ?? "default"}`).join(" ")}`,
    ...ops.map((op, index) => `  ${index + 1}. ${describeOp(op)}`),
  ].join("\n");

/** Re-runs a counterexample and shows the first differing step of both sides, with error messages. */
async function explain(target: Target, modes: Modes, ops: readonly Op[]): Promise<string> {
  const expected = await trace(reference, modes, ops, "ref-replay", true);
  const actual = await trace(target, modes, ops, "ours-replay", true);
  return describeDifference(expected, actual, target.name);
}

const rootUser = process.getuid === undefined || process.getuid() === 0;

describe.skipIf(rootUser)("permissions (as a user file permissions apply to)", () => {
  for (const target of targets) {
    propertyTest(
      `${target.name} matches the reference on random sequences in a tree with denied permissions`,
      { runs: BASE_RUNS, timeMs: BASE_TIME_MS, fixedMs: 4 * OP_DEADLINE_MS + 30_000 },
      () =>
        fc.asyncProperty(modesArbitrary, sequenceArbitrary(MAX_OPS), async (modes, ops) => {
          const expected = await trace(reference, modes, ops, "ref");
          const actual = await trace(target, modes, ops, "ours");
          expect(actual).toEqual(expected);
        }),
      {
        runTimeoutMs: 4 * OP_DEADLINE_MS,
        describe: ([modes, ops]) => render(modes, ops),
        explain: ([modes, ops]) => explain(target, modes, ops),
      },
    );
  }
});
