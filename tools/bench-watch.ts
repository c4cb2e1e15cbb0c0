// The watching rows of `make bench` (issue 9): the reference NodeFileWatcher (in process) next to the agent's
// watcher (LocalExecutionEnv), in one run. Rows:
// - idle CPU while watching 10,000 directories natively (average over 10 s, with the min–max of 1 s samples);
// - opening a native watcher on those 10,000 directories (scan + one native watch per directory);
// - one polling rescan of those 10,000 directories (opening a polling watcher: exactly one full scan);
// - write → onChange latency, native and polling at 100 ms (median with p10–p90, candidates interleaved per round).
// A candidate whose watcher fails shows "n/a" with the reason below the table.
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type ExecutionEnv, LocalExecutionEnv, type WatchChange } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";

const context = { abortSignal: undefined };
const quick = process.env.BENCH_QUICK === "1";

interface WatchOptions {
  mode: "native" | "polling";
  pollIntervalMs?: number;
}

/** One watcher implementation: an env per watch options, and the CPU seconds its watcher runs on. */
interface Candidate {
  name: string;
  open(
    cwd: string,
    watch: WatchOptions,
  ): Promise<{ env: ExecutionEnv; cpuSeconds: () => number; dispose(): Promise<void> }>;
}

const reference: Candidate = {
  name: "reference",
  open: async (cwd, watch) => ({
    env: new NodeExecutionEnv({ cwd, watch }),
    cpuSeconds: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
    dispose: async () => {},
  }),
};

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

const outpost: Candidate = {
  name: "outpost",
  open: async (cwd, watch) => {
    const options = { cwd, watch };
    const env = new LocalExecutionEnv(options);
    const { pid } = await env.connection.info();
    return {
      env,
      cpuSeconds: () => {
        // Fields 14 and 15 (utime, stime) after the parenthesised command name.
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
        return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
      },
      dispose: () => env.close(),
    };
  },
};

/** A measured value with its spread, or why there is none. */
type Measure = { median: number; low: number; high: number } | { missing: string };

function summary(samples: number[], lowQuantile = 0, highQuantile = 1): Measure {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
  return { median: at(0.5), low: at(lowQuantile), high: at(highQuantile) };
}

/** 99 directories of 100 directories each, plus the root: 10,000 directories, exactly the default budget. */
async function makeTree(root: string): Promise<void> {
  for (let top = 0; top < 99; top++) {
    await Promise.all(
      Array.from({ length: 100 }, (_, sub) => mkdir(join(root, `d${top}`, `s${sub}`), { recursive: true })),
    );
  }
}

/** Opens a watcher, or says why it could not. */
async function watchTree(env: ExecutionEnv, onChange: (change: WatchChange) => void = () => {}) {
  const opened = await env.watch([{ path: "tree", recursive: true }], onChange, context);
  if (!opened.ok) throw new Error(`${opened.error.code}: ${opened.error.message}`);
  return opened.value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Idle CPU (% of one core) of a native watcher on the tree, after 1 s of settling: the average over 10 s (the agent's
 * CPU is counted in 10 ms ticks, so only the whole window resolves it), with the min–max of its 1 s samples.
 */
async function idleCpu(candidate: Candidate, cwd: string): Promise<Measure> {
  const subject = await candidate.open(cwd, { mode: "native" });
  try {
    const watcher = await watchTree(subject.env);
    try {
      await sleep(1000);
      const samples: number[] = [];
      const cpuAtStart = subject.cpuSeconds();
      const windowStart = performance.now();
      for (let second = 0; second < (quick ? 3 : 10); second++) {
        const cpu = subject.cpuSeconds();
        const start = performance.now();
        await sleep(1000);
        samples.push(((subject.cpuSeconds() - cpu) / ((performance.now() - start) / 1000)) * 100);
      }
      const average = ((subject.cpuSeconds() - cpuAtStart) / ((performance.now() - windowStart) / 1000)) * 100;
      return { ...summary(samples), median: average };
    } finally {
      await watcher.close(context);
    }
  } catch (error) {
    return { missing: String(error instanceof Error ? error.message : error) };
  } finally {
    await subject.dispose();
  }
}

/** Median time to open a watcher on the tree in `mode` (interleaved rounds). */
async function openTimes(cwd: string, mode: "native" | "polling", rounds: number): Promise<Map<string, Measure>> {
  const samples = new Map<string, number[]>();
  const failures = new Map<string, string>();
  const subjects = await Promise.all(
    [reference, outpost].map(async (c) => ({ c, s: await c.open(cwd, { mode, pollIntervalMs: 3_600_000 }) })),
  );
  try {
    for (let round = 0; round < rounds; round++) {
      for (const { c, s } of subjects) {
        if (failures.has(c.name)) continue;
        try {
          const start = performance.now();
          const watcher = await watchTree(s.env);
          samples.set(c.name, [...(samples.get(c.name) ?? []), performance.now() - start]);
          await watcher.close(context);
        } catch (error) {
          failures.set(c.name, error instanceof Error ? error.message : String(error));
        }
      }
    }
  } finally {
    for (const { s } of subjects) await s.dispose();
  }
  return new Map(
    [reference, outpost].map((c) => [
      c.name,
      failures.has(c.name) ? { missing: failures.get(c.name) ?? "" } : summary(samples.get(c.name) ?? []),
    ]),
  );
}

/** write → onChange latency in ms, `rounds` interleaved rounds, median with p10–p90. */
async function latencies(cwd: string, watch: WatchOptions, rounds: number): Promise<Map<string, Measure>> {
  await mkdir(join(cwd, "lat"), { recursive: true });
  const file = join(cwd, "lat", "f.txt");
  await writeFile(file, "start");
  type Live = {
    name: string;
    changes: number;
    wake?: () => void;
    close: () => Promise<void>;
    dispose: () => Promise<void>;
  };
  const lives: Live[] = [];
  const failures = new Map<string, string>();
  for (const candidate of [reference, outpost]) {
    const subject = await candidate.open(cwd, watch);
    const live: Live = { name: candidate.name, changes: 0, close: async () => {}, dispose: subject.dispose };
    const opened = await subject.env.watch(
      [{ path: "lat" }],
      () => {
        live.changes++;
        live.wake?.();
      },
      context,
    );
    if (!opened.ok) {
      failures.set(candidate.name, `${opened.error.code}: ${opened.error.message}`);
      await subject.dispose();
      continue;
    }
    live.close = () => opened.value.close(context);
    lives.push(live);
  }
  const samples = new Map<string, number[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const live of lives) {
        // Let trailing events of the previous write settle, so they are not taken for this one.
        await sleep(watch.mode === "polling" ? 250 : 150);
        const before = live.changes;
        const seen = new Promise<void>((resolve) => {
          live.wake = () => {
            if (live.changes > before) resolve();
          };
        });
        const start = performance.now();
        await writeFile(file, `${round}-${live.name}`);
        const timeout = sleep(3000).then(() => "timeout" as const);
        const outcome = await Promise.race([seen.then(() => "seen" as const), timeout]);
        if (outcome === "timeout") throw new Error(`${live.name}: no change within 3 s`);
        samples.set(live.name, [...(samples.get(live.name) ?? []), performance.now() - start]);
      }
    }
  } finally {
    for (const live of lives) {
      await live.close();
      await live.dispose();
    }
  }
  return new Map(
    [reference, outpost].map((c) => [
      c.name,
      failures.has(c.name) ? { missing: failures.get(c.name) ?? "" } : summary(samples.get(c.name) ?? [], 0.1, 0.9),
    ]),
  );
}

function show(measure: Measure | undefined, digits: number): string {
  if (measure === undefined) return "n/a";
  if ("missing" in measure) return "n/a";
  return `${measure.median.toFixed(digits)} (${measure.low.toFixed(digits)}–${measure.high.toFixed(digits)})`;
}

function ratio(reference: Measure | undefined, outpost: Measure | undefined): string {
  if (reference === undefined || outpost === undefined || "missing" in reference || "missing" in outpost) return "";
  if (reference.median === 0) return "";
  return `${(outpost.median / reference.median).toFixed(2)}x`;
}

/** Measures and prints the watching rows; `cwd` is an empty scratch directory. */
export async function benchWatch(cwd: string): Promise<void> {
  await makeTree(join(cwd, "tree"));
  const rounds = quick ? 5 : 30;
  const rows: { name: string; unit: string; digits: number; values: Map<string, Measure> }[] = [];
  rows.push({
    name: "idle CPU 10 s, 10,000 dirs, native",
    unit: "% core",
    digits: 2,
    values: new Map([
      ["reference", await idleCpu(reference, cwd)],
      ["outpost", await idleCpu(outpost, cwd)],
    ]),
  });
  rows.push({
    name: "open native, 10,000 dirs",
    unit: "ms",
    digits: 1,
    values: await openTimes(cwd, "native", quick ? 2 : 5),
  });
  rows.push({
    name: "one polling rescan, 10,000 dirs",
    unit: "ms",
    digits: 1,
    values: await openTimes(cwd, "polling", quick ? 2 : 5),
  });
  rows.push({
    name: "write → onChange, native",
    unit: "ms",
    digits: 1,
    values: await latencies(cwd, { mode: "native" }, rounds),
  });
  rows.push({
    name: "write → onChange, polling 100 ms",
    unit: "ms",
    digits: 1,
    values: await latencies(cwd, { mode: "polling", pollIntervalMs: 100 }, rounds),
  });

  console.log("");
  console.log("watching (median, spread in parentheses)");
  console.log(
    `${"operation".padEnd(34)}${"reference".padStart(24)}${"outpost".padStart(24)}  unit    outpost/reference`,
  );
  for (const row of rows) {
    const ref = row.values.get("reference");
    const out = row.values.get("outpost");
    console.log(
      `${row.name.padEnd(34)}${show(ref, row.digits).padStart(24)}${show(out, row.digits).padStart(24)}  ${row.unit.padEnd(7)} ${ratio(ref, out)}`,
    );
  }
  const missing = rows.flatMap((row) =>
    [...row.values].flatMap(([name, measure]) =>
      "missing" in measure ? [`${name} ${row.name}: ${measure.missing}`] : [],
    ),
  );
  for (const line of [...new Set(missing)].slice(0, 5)) console.log(`  n/a: ${line}`);
}
