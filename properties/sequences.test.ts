/**
 * Differential sequences: random operation sequences run on the reference `NodeExecutionEnv` and on each Outpost
 * env, each in a fresh empty root; the normalized traces must be equal, step for step. fast-check shrinks a
 * failure to a minimal sequence, printed with the seed, path and replay command.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { propertyTest, withDeadline } from "./harness.js";
import {
  describeDifference,
  describeOp,
  firstDifference,
  newState,
  type Op,
  runSequence,
  type Step,
  sequenceArbitrary,
} from "./ops.js";
import { propertyFixture, type Target } from "./targets.js";

/** Most blocks (an operation, a reader block or concurrent reads) after the prelude of a sequence. */
const MAX_OPS = 25;
/** CI runs per Outpost env. */
const BASE_RUNS = 300;
/** CI time budget per Outpost env, including shrinking. */
const BASE_TIME_MS = 40_000;
/** An operation taking longer than this is reported as hung (the longest legit one is a 0.2 s timeout). */
const OP_DEADLINE_MS = 15_000;
/** Time spent dropping unneeded operations from a shrunk counterexample. */
const MINIMIZE_MS = 30_000;

const fixture = propertyFixture();
const { reference, targets } = fixture;

/** Operations executed per target (runs, shrinking and replays alike), for the property's totals line. */
const executed = new Map<Target, number>();

/**
 * The trace running now. Traces never overlap: a run fast-check abandoned (time limit, run timeout) keeps going
 * in the background, and it must not see a later run's `cwd` on the env they share.
 */
let running: Promise<unknown> = Promise.resolve();

/** Runs a sequence on one target in a fresh root and returns its normalized trace (after any running one). */
function trace(target: Target, ops: readonly Op[], label: string, messages = false): Promise<Step[]> {
  const previous = running;
  const next = withDeadline(previous, MAX_OPS * OP_DEADLINE_MS).then(() => traceNow(target, ops, label, messages));
  running = next.catch(() => undefined);
  return next;
}

async function traceNow(target: Target, ops: readonly Op[], label: string, messages: boolean): Promise<Step[]> {
  const root = fixture.sandbox.root(label);
  const state = newState(target.at(root), root, fixture.sandbox.normalizer(root, { messages }));
  try {
    return await runSequence(state, ops, OP_DEADLINE_MS, () => executed.set(target, (executed.get(target) ?? 0) + 1));
  } finally {
    fixture.sandbox.drop(root);
  }
}

function renderSequence(ops: readonly Op[]): string {
  return ops.map((op, index) => `  ${index + 1}. ${describeOp(op)}`).join("\n");
}

async function diverges(target: Target, ops: readonly Op[]): Promise<boolean> {
  const expected = await trace(reference, ops, "ref-min");
  return firstDifference(expected, await trace(target, ops, "ours-min")) !== -1;
}

/**
 * fast-check shrinks blocks and values but may leave operations a failure does not need; this drops single
 * operations while the divergence persists (within a time limit), so the report shows a 1-minimal sequence.
 */
async function minimize(target: Target, ops: readonly Op[]): Promise<Op[]> {
  let current = [...ops];
  const stopAt = Date.now() + MINIMIZE_MS;
  for (let index = current.length - 1; index >= 0 && Date.now() < stopAt; index--) {
    const candidate = current.filter((_, at) => at !== index);
    if (candidate.length > 0 && (await diverges(target, candidate))) current = candidate;
  }
  return current;
}

/** Re-runs a counterexample, minimizes it, and shows the first differing step with error messages. */
async function explain(target: Target, ops: readonly Op[]): Promise<string> {
  const minimal = await minimize(target, ops);
  const expected = await trace(reference, minimal, "ref-replay", true);
  const actual = await trace(target, minimal, "ours-replay", true);
  return [
    minimal.length < ops.length ? `Minimal after dropping unneeded operations:\n${renderSequence(minimal)}` : "",
    describeDifference(expected, actual, target.name),
  ]
    .filter((line) => line !== "")
    .join("\n");
}

for (const target of targets) {
  const name = `${target.name} matches the reference on random operation sequences`;
  propertyTest(
    name,
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS, fixedMs: 4 * OP_DEADLINE_MS + MINIMIZE_MS + 30_000 },
    () =>
      fc.asyncProperty(sequenceArbitrary(MAX_OPS), async (ops) => {
        const expected = await trace(reference, ops, "ref");
        const actual = await trace(target, ops, "ours");
        expect(actual).toEqual(expected);
      }),
    {
      runTimeoutMs: 4 * OP_DEADLINE_MS,
      describe: ([ops]) => renderSequence(ops),
      explain: ([ops]) => explain(target, ops),
      operations: () => executed.get(target) ?? 0,
    },
  );
}
