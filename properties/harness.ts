/**
 * Budget, seeds and failure reports shared by the property files.
 *
 * - `NUM_RUNS_SCALE` (default 1) multiplies every property's number of runs and the test timeouts; the CI
 *   default keeps all property files together around two minutes on two slow cores, `make properties-nightly`
 *   sets 50. Above 1 a budget run must mean something: a property that completes fewer than half of its runs
 *   within its time limit fails (at 1 that is only logged, since CI machines vary).
 * - `OUTPOST_PROP_SEED` fixes the seed (otherwise a random one), `OUTPOST_PROP_PATH` replays one shrunk
 *   counterexample. The seed is always printed, and a failure prints the command that replays it.
 * - Every property prints its totals, `[properties] <name>: N runs[, M operations]`, for the nightly's summary;
 *   with `OUTPOST_PROP_REPORT=<file>` it also appends them to that file as one JSON line (`PropertyReport`), which
 *   `tools/nightly-summary.mjs` merges across shards.
 * - `OUTPOST_PROP_SHARD=i/N` (`make properties-nightly SHARD=i/N`) runs shard i of N: its part of every property's
 *   runs and time, from a seed derived from the base seed and i (see `shard.ts`).
 */
import { appendFileSync } from "node:fs";
import fc from "fast-check";
import { it } from "vitest";
import { parseShard, shardLabel, shardRuns, shardSeed } from "./shard.js";

/** The multiplier of runs and timeouts. */
export const NUM_RUNS_SCALE = positiveNumber(process.env.NUM_RUNS_SCALE, 1);

/** The shard of the whole budget this run does (the whole run unless `OUTPOST_PROP_SHARD` is set). */
export const SHARD = parseShard(process.env.OUTPOST_PROP_SHARD);

/** The seed given (or drawn) for the whole run; shards derive theirs from it. */
export const BASE_SEED = seedFromEnv();

/** The seed of every property of this run (this shard's). */
export const SEED = shardSeed(BASE_SEED, SHARD);

/** Where the totals are appended as JSON lines, if anywhere. */
const REPORT_FILE = process.env.OUTPOST_PROP_REPORT === "" ? undefined : process.env.OUTPOST_PROP_REPORT;

/** A replay path, when one was given. */
const REPLAY_PATH = process.env.OUTPOST_PROP_PATH === "" ? undefined : process.env.OUTPOST_PROP_PATH;

function positiveNumber(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return text !== undefined && text !== "" && Number.isFinite(value) && value > 0 ? value : fallback;
}

function seedFromEnv(): number {
  const text = process.env.OUTPOST_PROP_SEED;
  if (text !== undefined && text !== "") {
    const seed = Number(text);
    if (!Number.isSafeInteger(seed)) throw new Error(`OUTPOST_PROP_SEED must be an integer, got ${text}`);
    return seed | 0;
  }
  return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
}

/** Runs for a property whose CI budget is `base` runs: this shard's part of the scaled budget (maybe none). */
export function numRuns(base: number): number {
  return shardRuns(Math.max(1, Math.round(base * NUM_RUNS_SCALE)), SHARD);
}

/**
 * A vitest timeout: the CI value scaled with the number of runs (and divided among the shards), plus a fixed part
 * that does not scale.
 */
export function testTimeout(scaledMs: number, fixedMs = 30_000): number {
  return Math.round((scaledMs * NUM_RUNS_SCALE) / SHARD.count + fixedMs);
}

/** One property's totals, as `OUTPOST_PROP_REPORT` records them. */
export interface PropertyReport {
  name: string;
  shard: string;
  baseSeed: number;
  seed: number;
  scale: number;
  requested: number;
  runs: number;
  operations?: number;
  passed: boolean;
  interrupted: boolean;
}

function appendReport(entry: PropertyReport): void {
  if (REPORT_FILE !== undefined) appendFileSync(REPORT_FILE, `${JSON.stringify(entry)}\n`);
}

/** A property's CI budget: `runs` and `timeMs` are scaled by NUM_RUNS_SCALE, `fixedMs` (default 30 s) is not. */
export interface Budget {
  runs: number;
  /** Time after which fast-check stops starting runs or shrinking. */
  timeMs: number;
  /** Time the test has on top of that: setup, a run in flight, re-running a counterexample. */
  fixedMs?: number;
}

/**
 * Registers a vitest test named `name` that checks the property `build` makes within `budget` (see
 * `checkProperty`); the test times out after the scaled time plus the fixed part.
 */
export function propertyTest<Ts extends unknown[]>(
  name: string,
  budget: Budget,
  build: () => fc.IAsyncPropertyWithHooks<Ts>,
  options: Omit<CheckOptions<Ts>, "name" | "numRuns" | "timeLimitMs">,
): void {
  it(
    name,
    () =>
      checkProperty(build(), {
        ...options,
        name,
        numRuns: numRuns(budget.runs),
        timeLimitMs: testTimeout(budget.timeMs, 0),
      }),
    testTimeout(budget.timeMs, budget.fixedMs),
  );
}

/** How a property is run and reported. */
export interface CheckOptions<Ts extends unknown[]> {
  /** The name vitest shows (used in the replay command's `-t`). */
  name: string;
  numRuns: number;
  /** Time after which fast-check stops starting runs or shrinks; a failure found so far is still reported. */
  timeLimitMs: number;
  /** Per-run limit: a run that hangs longer fails (and is shrunk like any failure). */
  runTimeoutMs?: number;
  /** A readable rendering of a counterexample (fast-check's own is used otherwise). */
  describe?: (values: Ts) => string;
  /** Re-runs a counterexample and explains what differed (e.g. the first differing step). */
  explain?: (values: Ts) => Promise<string>;
  /**
   * A running count of the operations the property has executed (sequence properties); the totals line reports
   * how much it grew during the check.
   */
  operations?: () => number;
}

/** The fewest completed runs, as a share of the requested ones, that a scaled-up run accepts from the time limit. */
const MIN_SHARE_OF_RUNS = 0.5;

/**
 * The verdict on a run cut short by the time limit: `undefined` if acceptable, otherwise why. Only scaled-up runs
 * (NUM_RUNS_SCALE > 1) are held to the budget; at the CI scale a short run is logged instead.
 */
export function budgetShortfall(
  name: string,
  completed: number,
  requested: number,
  interrupted: boolean,
  scale: number = NUM_RUNS_SCALE,
): string | undefined {
  if (!interrupted || completed >= requested * MIN_SHARE_OF_RUNS) return undefined;
  const message =
    `${name}: only ${completed} of ${requested} runs completed within the time limit ` +
    `(under ${MIN_SHARE_OF_RUNS * 100}%, NUM_RUNS_SCALE=${scale})`;
  if (scale > 1) return message;
  console.log(`[properties] ${message}; not a failure at this scale`);
  return undefined;
}

/**
 * Checks a property with the run's seed (and replay path), prints the seed, and on failure throws an error that
 * shows the minimal counterexample, the seed and path, and the command that replays it.
 */
export async function checkProperty<Ts extends unknown[]>(
  property: fc.IAsyncPropertyWithHooks<Ts>,
  options: CheckOptions<Ts>,
): Promise<void> {
  const sharded =
    SHARD.count === 1
      ? ""
      : ` (shard ${shardLabel(SHARD)} of base seed ${BASE_SEED}; replay the shard with ` +
        `make properties-nightly SHARD=${shardLabel(SHARD)} OUTPOST_PROP_SEED=${BASE_SEED})`;
  console.log(
    `[properties] ${options.name}: seed ${SEED}${REPLAY_PATH === undefined ? "" : `, path ${REPLAY_PATH}`}, ` +
      `${options.numRuns} runs (NUM_RUNS_SCALE=${NUM_RUNS_SCALE})${sharded}`,
  );
  const entry = {
    name: options.name,
    shard: shardLabel(SHARD),
    baseSeed: BASE_SEED,
    seed: SEED,
    scale: NUM_RUNS_SCALE,
    requested: options.numRuns,
  };
  if (options.numRuns === 0) {
    // A shard of a budget smaller than the shard count: the other shards do all of its runs.
    console.log(`[properties] ${options.name}: 0 runs (shard ${shardLabel(SHARD)} has no part of this budget)`);
    appendReport({ ...entry, runs: 0, passed: true, interrupted: false });
    return;
  }
  const operationsBefore = options.operations?.() ?? 0;
  const details = await fc.check(property, {
    seed: SEED,
    ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH }),
    numRuns: options.numRuns,
    interruptAfterTimeLimit: options.timeLimitMs,
    ...(options.runTimeoutMs === undefined ? {} : { timeout: options.runTimeoutMs }),
  });
  const operationCount = options.operations === undefined ? undefined : options.operations() - operationsBefore;
  const operations = operationCount === undefined ? "" : `, ${operationCount} operations`;
  console.log(`[properties] ${options.name}: ${details.numRuns} runs${operations}`);
  const shortfall = details.failed
    ? undefined
    : budgetShortfall(options.name, details.numRuns, options.numRuns, details.interrupted);
  appendReport({
    ...entry,
    runs: details.numRuns,
    ...(operationCount === undefined ? {} : { operations: operationCount }),
    passed: !details.failed && shortfall === undefined,
    interrupted: details.interrupted,
  });
  if (!details.failed) {
    console.log(
      `[properties] ${options.name}: ${details.numRuns} runs passed${details.interrupted ? " (time limit)" : ""}`,
    );
    if (shortfall !== undefined) throw new Error(`${shortfall}: the budget was not met, so the run proves too little`);
    return;
  }
  if (details.counterexample === null) {
    throw new Error(`${options.name}: no run completed within ${options.timeLimitMs} ms (seed ${SEED})`);
  }
  const values = details.counterexample;
  const shown = options.describe?.(values) ?? fc.stringify(values);
  const explanation = options.explain === undefined ? "" : await explainSafely(options.explain, values);
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const report = [
    `Property "${options.name}" failed after ${details.numRuns} run(s), shrunk ${details.numShrinks} time(s)` +
      `${details.interrupted ? " (shrinking cut short by the time limit)" : ""}.`,
    `seed ${details.seed}, path ${details.counterexamplePath}`,
    "Minimal counterexample:",
    shown,
    explanation,
    `Replay: OUTPOST_PROP_SEED=${details.seed} OUTPOST_PROP_PATH=${details.counterexamplePath} ` +
      `npx vitest run properties -t ${JSON.stringify(options.name)}`,
    "Failure of the shrunk run:",
    truncate(cause, 4000),
  ]
    .filter((line) => line !== "")
    .join("\n");
  console.log(report);
  throw new Error(report);
}

async function explainSafely<Ts>(explain: (values: Ts) => Promise<string>, values: Ts): Promise<string> {
  try {
    return await explain(values);
  } catch (error) {
    return `(re-running the counterexample failed: ${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Cuts a long text for a report. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}

/** What `withDeadline` gives for a promise that did not settle in time. */
export const HUNG = "<hung>";

/** `promise`, or `HUNG` once `ms` have passed without it settling (it keeps running in the background). */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | typeof HUNG> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof HUNG>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
