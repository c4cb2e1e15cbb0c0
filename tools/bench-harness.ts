// The measuring part of every bench program (`make bench`): candidates of one row run interleaved in rounds, their
// order rotated each round, so a noisy neighbour or a CPU-frequency change hits every candidate alike. Each round
// yields one median per candidate; a row reports the median of those round medians and their spread (min–max of
// the round medians), and ratios against the anchors measured in the same rows of the same run.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

/** One thing measured in a row: an Outpost env, the reference, or an anchor (what a user would use instead). */
export interface Candidate {
  /** Stable name (the JSON key), e.g. `local`, `reference`, `node`, `echo`, `sftp`. */
  name: string;
  /** Anchors are what the other candidates' ratios are taken against. */
  anchor?: boolean;
  /** One call; a burst row times it as a whole and it reports each operation's latency through `latencies`. */
  run: (latencies: number[]) => Promise<unknown>;
  /** Untimed preparation before every call (e.g. truncate the file an append grows). */
  before?: () => Promise<unknown>;
  /** Untimed clean-up after every call (e.g. close the connection the call opened). */
  after?: () => Promise<unknown>;
  /** Calls per round for this candidate, when it is too slow for the row's `perRound` (e.g. a fresh `ssh`). */
  perRound?: number;
  /** CPU seconds used so far by the process that serves this candidate (the agent), if it is a separate process. */
  agentCpu?: () => number;
}

/** Units of rows: times, or a share of one core (idle CPU). */
export type Unit = "µs" | "ms" | "% core";

/** How a row is measured. */
export interface RowSpec {
  /** Stable name of the row (JSON key for comparing runs); sizes and counts are part of the name. */
  name: string;
  /** The unit of the reported times. */
  unit: "µs" | "ms";
  /** Rounds (>= 5 in a full run). */
  rounds: number;
  /** Calls per candidate per round; a round's value for a candidate is the median of these. */
  perRound: number;
  /** Bytes one call moves: the row then also shows MiB/s. */
  bytes?: number;
  /** The row also reports per-operation p50/p99 latency and CPU per call (burst rows). */
  burst?: boolean;
  /** One untimed call per candidate before the rounds (default true; smoke runs skip it). */
  warmup?: boolean;
  candidates: Candidate[];
}

/** Median and spread of one candidate's round medians. */
export interface Measure {
  /** Median of the per-round medians, in the row's unit. */
  median: number;
  /** Lowest round median. */
  min: number;
  /** Highest round median. */
  max: number;
  /** Every round's median, in round order. */
  rounds: number[];
  /** MiB/s at the median, for rows that move bytes. */
  mibPerSecond?: number;
  /**
   * Rows of many short calls: median over rounds of the round's 10th-percentile call. On an idle VM a round trip
   * costs either the work or the work plus a wake-up of a halted vCPU (tens of µs), and a round's median can land on
   * either; the fast calls show what the software costs, free of that lottery.
   */
  p10?: number;
  /** Burst rows: median over rounds of the round's p50 / p99 per-operation latency (row unit). */
  p50?: number;
  p99?: number;
  /** Burst rows: CPU ms per call (mean over all rounds) of this process and of the serving agent. */
  clientCpuMs?: number;
  agentCpuMs?: number;
}

/** One row of the result: per-candidate measures, ratios against anchors, and candidates that failed. */
export interface RowResult {
  row: string;
  unit: Unit;
  rounds: number;
  perRound: number;
  /** How `min`/`max` are defined. */
  spread: "min-max of round medians";
  results: Record<string, Measure>;
  /** The candidates that are anchors, in the row's order. */
  anchors: string[];
  /** `ratios[candidate][anchor]` = candidate median / anchor median (> 1: slower than the anchor). */
  ratios: Record<string, Record<string, number>>;
  /** Candidates that failed, with why (they are left out of the row). */
  failed: Record<string, string>;
}

/** The median of `values` (mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The `q`-quantile of `values` (nearest rank), e.g. 0.99 for p99. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Median and min–max of a set of round values. */
export function summarize(roundValues: readonly number[]): Pick<Measure, "median" | "min" | "max" | "rounds"> {
  return {
    median: median(roundValues),
    min: Math.min(...roundValues),
    max: Math.max(...roundValues),
    rounds: [...roundValues],
  };
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system, all threads) a process has used, from /proc/<pid>/stat; NaN where unreadable. */
export function processCpuSeconds(pid: number): number {
  try {
    // Fields 14 and 15 (utime, stime) come after the parenthesised command name, which may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

function clientCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/** The order of the candidates in round `round`: rotated by one each round. */
export function rotation<T>(items: readonly T[], round: number): T[] {
  const shift = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

function reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0].slice(0, 200);
}

/** Calls per round from which a round's 10th percentile is reported (`Measure.p10`). */
const P10_MIN_CALLS = 20;

interface Tally {
  roundValues: number[];
  p10: number[];
  p50: number[];
  p99: number[];
  clientCpu: number;
  agentCpu: number;
  calls: number;
}

/** Calls of a short-call row's untimed warm-up per candidate, and the time that cuts it short. */
const WARM_UP_CALLS = 6000;
const WARM_UP_MS = 1000;

/** Measures one row: a warm-up per candidate (one call, or short calls until steady), then `rounds` interleaved rounds. */
export async function measureRow(spec: RowSpec): Promise<RowResult> {
  const scale = spec.unit === "ms" ? 1 : 1000;
  const failed: Record<string, string> = {};
  const tallies = new Map<string, Tally>();
  const live = () => spec.candidates.filter((candidate) => failed[candidate.name] === undefined);
  // Rows of many short calls: they warm up until steady and report p10. Burst rows report per-operation
  // quantiles instead, byte-moving rows their throughput.
  const shortCalls = !spec.burst && spec.bytes === undefined;
  for (const candidate of spec.candidates) {
    tallies.set(candidate.name, { roundValues: [], p10: [], p50: [], p99: [], clientCpu: 0, agentCpu: 0, calls: 0 });
    if (spec.warmup === false) continue;
    try {
      // Rows of short calls warm up until steady (WARM_UP_CALLS calls, or WARM_UP_MS of them if that comes
      // first): V8 optimizes a call path only after thousands of calls, and a long path like an env's request
      // measured 126 µs per call in its first 200 calls, 40 µs after 1,600 and 16 µs after 6,000 (fileInfo,
      // one CPU). Measured cold, a row would show how far the JIT had got, not what the call costs.
      const started = performance.now();
      const warmCalls = shortCalls ? WARM_UP_CALLS : 1;
      for (let call = 0; call < warmCalls; call++) {
        await candidate.before?.();
        await candidate.run([]);
        await candidate.after?.();
        if (performance.now() - started > WARM_UP_MS) break;
      }
    } catch (error) {
      failed[candidate.name] = reason(error);
    }
  }
  for (let round = 0; round < spec.rounds; round++) {
    for (const candidate of rotation(live(), round)) {
      const tally = tallies.get(candidate.name) as Tally;
      const times: number[] = [];
      const latencies: number[] = [];
      try {
        for (let call = 0; call < (candidate.perRound ?? spec.perRound); call++) {
          await candidate.before?.();
          // CPU is reported for bursts only; reading it around a short call (the agent's from /proc) would cost
          // that call cold caches the anchors, which have no agent, do not pay.
          const client = spec.burst ? clientCpuSeconds() : 0;
          const agent = spec.burst ? (candidate.agentCpu?.() ?? Number.NaN) : 0;
          const start = performance.now();
          await candidate.run(latencies);
          times.push((performance.now() - start) * scale);
          if (spec.burst) {
            tally.clientCpu += clientCpuSeconds() - client;
            tally.agentCpu += (candidate.agentCpu?.() ?? Number.NaN) - agent;
          }
          tally.calls++;
          await candidate.after?.();
        }
      } catch (error) {
        failed[candidate.name] = reason(error);
        continue;
      }
      tally.roundValues.push(median(times));
      if (shortCalls && times.length >= P10_MIN_CALLS) tally.p10.push(quantile(times, 0.1));
      if (spec.burst) {
        // Latencies are recorded in ms (performance.now()); scale turns them into the row's unit.
        tally.p50.push(quantile(latencies, 0.5) * scale);
        tally.p99.push(quantile(latencies, 0.99) * scale);
      }
    }
  }
  const results: Record<string, Measure> = {};
  for (const candidate of live()) {
    const tally = tallies.get(candidate.name) as Tally;
    const measure: Measure = summarize(tally.roundValues);
    if (spec.bytes !== undefined) {
      measure.mibPerSecond = spec.bytes / 1024 / 1024 / (measure.median / (spec.unit === "ms" ? 1e3 : 1e6));
    }
    if (shortCalls && tally.p10.length === tally.roundValues.length) {
      measure.p10 = median(tally.p10);
    }
    if (spec.burst) {
      measure.p50 = median(tally.p50);
      measure.p99 = median(tally.p99);
      measure.clientCpuMs = (tally.clientCpu / tally.calls) * 1000;
      if (candidate.agentCpu !== undefined) measure.agentCpuMs = (tally.agentCpu / tally.calls) * 1000;
    }
    results[candidate.name] = measure;
  }
  const anchors = live().filter((candidate) => candidate.anchor);
  const ratios: Record<string, Record<string, number>> = {};
  for (const candidate of live()) {
    const own: Record<string, number> = {};
    for (const anchor of anchors) {
      if (anchor.name !== candidate.name)
        own[anchor.name] = results[candidate.name].median / results[anchor.name].median;
    }
    if (Object.keys(own).length > 0) ratios[candidate.name] = own;
  }
  return {
    row: spec.name,
    unit: spec.unit,
    rounds: spec.rounds,
    perRound: spec.perRound,
    spread: "min-max of round medians",
    results,
    anchors: anchors.map((anchor) => anchor.name),
    ratios,
    failed,
  };
}

/** Times one call of `op` (ms), for rows whose candidate runs a burst and records each operation's latency. */
export async function burst(count: number, op: () => Promise<unknown>, latencies: number[]): Promise<void> {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: count }, async () => {
      await op();
      latencies.push(performance.now() - start);
    }),
  );
}

function fixed(value: number | undefined, unit: Unit): string {
  if (value === undefined || Number.isNaN(value)) return "";
  const digits = unit === "µs" ? (value < 100 ? 1 : 0) : value < 10 ? 2 : 1;
  return value.toFixed(digits);
}

/** The table of a run: the row's name, then one line per candidate with its ratios against every anchor of the row. */
export function formatTable(rows: readonly RowResult[]): string {
  const anchorNames = [...new Set(rows.flatMap((row) => row.anchors))];
  const width = (anchor: string) => Math.max(7, anchor.length + 2);
  const header = [
    "  candidate".padEnd(14),
    "median".padStart(10),
    "spread".padStart(19),
    "extra".padStart(40),
    ...anchorNames.map((name) => `÷${name}`.padStart(width(name))),
  ].join(" ");
  const lines = [header, "-".repeat(header.length)];
  for (const row of rows) {
    lines.push(`${row.row} [${row.unit}]`);
    for (const [name, measure] of Object.entries(row.results)) {
      const extra =
        measure.mibPerSecond !== undefined
          ? `${measure.mibPerSecond.toFixed(0)} MiB/s`
          : measure.p50 !== undefined
            ? `p50 ${fixed(measure.p50, row.unit)} p99 ${fixed(measure.p99, row.unit)} cpu` +
              (measure.agentCpuMs !== undefined ? ` agent ${fixed(measure.agentCpuMs, "ms")}` : "") +
              ` node ${fixed(measure.clientCpuMs, "ms")}`
            : measure.p10 !== undefined
              ? `p10 ${fixed(measure.p10, row.unit)}`
              : "";
      lines.push(
        [
          `  ${name}`.padEnd(14),
          fixed(measure.median, row.unit).padStart(10),
          `${fixed(measure.min, row.unit)}–${fixed(measure.max, row.unit)}`.padStart(19),
          extra.padStart(40),
          ...anchorNames.map((anchor) => {
            const ratio = row.ratios[name]?.[anchor];
            return (ratio === undefined ? "" : `${ratio.toPrecision(ratio < 10 ? 2 : 3)}x`).padStart(width(anchor));
          }),
        ].join(" "),
      );
    }
    for (const [name, why] of Object.entries(row.failed)) lines.push(`  ${name.padEnd(12)} failed: ${why}`);
  }
  return lines.join("\n");
}
