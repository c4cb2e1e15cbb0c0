// The watching rows of `make bench` (issue 9): the reference NodeFileWatcher (in process, `reference`) next to the
// agent's watcher (LocalExecutionEnv, `local`), in one run. Rows:
// - idle CPU while watching 10,000 directories natively (the mean over 5 s is the value, the min–max of its 1 s
//   samples the spread: the agent's CPU is counted in 10 ms ticks, so only the whole window resolves it);
// - opening a native watcher on those 10,000 directories (scan + one native watch per directory);
// - one polling rescan of those 10,000 directories (opening a polling watcher: exactly one full scan);
// - write → onChange latency, native and polling at 100 ms.
// All but the first run interleaved in rounds (tools/bench-harness.ts). A candidate whose watcher fails is listed as
// failed, with the reason, in its row.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { type ExecutionEnv, type FileWatcher, LocalExecutionEnv, type WatchChange } from "../sdk/src/index.js";
import { type Candidate, measureRow, processCpuSeconds, type RowResult, summarize } from "./bench-harness.js";

const context = { abortSignal: undefined };

interface WatchOptions {
  mode: "native" | "polling";
  pollIntervalMs?: number;
}

/** One watcher implementation: an env per watch options, and the CPU seconds its watcher runs on. */
interface Subject {
  name: string;
  open(
    cwd: string,
    watch: WatchOptions,
  ): Promise<{ env: ExecutionEnv; cpuSeconds: () => number; dispose(): Promise<void> }>;
}

const reference: Subject = {
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

const local: Subject = {
  name: "local",
  open: async (cwd, watch) => {
    const options = { cwd, watch };
    const env = new LocalExecutionEnv(options);
    const { pid } = await env.connection.info();
    return {
      env,
      cpuSeconds: () => processCpuSeconds(pid),
      dispose: () => env.close(),
    };
  },
};

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
 * Idle CPU (% of one core) of a native watcher on the tree, after 1 s of settling: the mean over `seconds`, with
 * the min–max of its 1 s samples (the mean first, then the samples), or why the watcher could not open.
 */
async function idleCpu(subject: Subject, cwd: string, seconds: number): Promise<number[] | string> {
  const opened = await subject.open(cwd, { mode: "native" });
  try {
    const watcher = await watchTree(opened.env);
    try {
      await sleep(1000);
      const samples: number[] = [];
      const cpuAtStart = opened.cpuSeconds();
      const windowStart = performance.now();
      for (let second = 0; second < seconds; second++) {
        const cpu = opened.cpuSeconds();
        const start = performance.now();
        await sleep(1000);
        samples.push(((opened.cpuSeconds() - cpu) / ((performance.now() - start) / 1000)) * 100);
      }
      const mean = ((opened.cpuSeconds() - cpuAtStart) / ((performance.now() - windowStart) / 1000)) * 100;
      return [mean, ...samples];
    } finally {
      await watcher.close(context);
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await opened.dispose();
  }
}

/** Time to open a watcher on the tree in `mode`, both subjects interleaved (each open is closed untimed). */
async function openRow(name: string, cwd: string, mode: "native" | "polling", rounds: number): Promise<RowResult> {
  const opened = await Promise.all(
    [reference, local].map(async (subject) => ({
      subject,
      live: await subject.open(cwd, { mode, pollIntervalMs: 3_600_000 }),
    })),
  );
  try {
    return await measureRow({
      name,
      unit: "ms",
      rounds,
      perRound: 1,
      // Each call is a whole scan of a tree just written (so in the page cache); a warm-up would cost a round.
      warmup: false,
      candidates: opened.map(({ subject, live }): Candidate => {
        let watcher: FileWatcher | undefined;
        return {
          name: subject.name,
          anchor: subject === reference,
          run: async () => {
            watcher = await watchTree(live.env);
          },
          after: async () => {
            await watcher?.close(context);
            watcher = undefined;
          },
        };
      }),
    });
  } finally {
    for (const { live } of opened) await live.dispose();
  }
}

/** write → onChange latency in ms, both subjects interleaved; trailing events of a write settle untimed first. */
async function latencyRow(name: string, cwd: string, watch: WatchOptions, rounds: number, perRound: number) {
  await mkdir(join(cwd, "lat"), { recursive: true });
  const file = join(cwd, "lat", "f.txt");
  await writeFile(file, "start");
  const disposals: (() => Promise<void>)[] = [];
  const candidates: Candidate[] = [];
  try {
    for (const subject of [reference, local]) {
      const live = await subject.open(cwd, watch);
      disposals.push(live.dispose);
      let changes = 0;
      let wake: (() => void) | undefined;
      const opened = await live.env.watch(
        [{ path: "lat" }],
        () => {
          changes++;
          wake?.();
        },
        context,
      );
      if (opened.ok) disposals.unshift(() => opened.value.close(context));
      let written = 0;
      candidates.push({
        name: subject.name,
        anchor: subject === reference,
        // Let trailing events of the previous write settle, so they are not taken for this one.
        before: () => sleep(watch.mode === "polling" ? 250 : 150),
        run: async () => {
          if (!opened.ok) throw new Error(`${opened.error.code}: ${opened.error.message}`);
          const before = changes;
          const seen = new Promise<void>((resolve) => {
            wake = () => {
              if (changes > before) resolve();
            };
          });
          await writeFile(file, `${++written}-${subject.name}`);
          const outcome = await Promise.race([seen.then(() => "seen"), sleep(3000).then(() => "timeout")]);
          if (outcome === "timeout") throw new Error(`${subject.name}: no change within 3 s`);
        },
      });
    }
    return await measureRow({ name, unit: "ms", rounds, perRound, candidates });
  } finally {
    for (const dispose of disposals) await dispose();
  }
}

/** Measures the watching rows; `cwd` is an empty scratch directory. */
export async function benchWatch(cwd: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  await makeTree(join(cwd, "tree"));
  const rounds = quick ? 2 : 5;
  const rows: RowResult[] = [];
  const seconds = quick ? 1 : 5;
  const idle: RowResult = {
    row: "watch idle CPU, 10,000 dirs, native",
    unit: "% core",
    rounds: 1,
    perRound: seconds,
    spread: "min-max of round medians",
    results: {},
    anchors: [],
    ratios: {},
    failed: {},
  };
  for (const subject of [reference, local]) {
    const samples = await idleCpu(subject, cwd, seconds);
    if (typeof samples === "string") idle.failed[subject.name] = samples;
    // The mean of the window is the value; the 1 s samples give the spread.
    else idle.results[subject.name] = { ...summarize(samples.slice(1)), median: samples[0] };
  }
  rows.push(idle);
  log("watch: idle CPU measured");
  rows.push(await openRow("watch open native, 10,000 dirs", cwd, "native", rounds));
  rows.push(await openRow("watch one polling rescan, 10,000 dirs", cwd, "polling", rounds));
  rows.push(await latencyRow("watch write → onChange, native", cwd, { mode: "native" }, rounds, quick ? 2 : 6));
  rows.push(
    await latencyRow(
      "watch write → onChange, polling 100 ms",
      cwd,
      { mode: "polling", pollIntervalMs: 100 },
      rounds,
      quick ? 2 : 6,
    ),
  );
  return rows;
}
