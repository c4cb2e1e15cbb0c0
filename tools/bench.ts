// `make bench`: per-operation median latency and throughput of LocalExecutionEnv (through the agent) next to the
// in-process reference NodeExecutionEnv, printed as ratios measured in one run (these machines are noisy).
import { lstat, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type ExecutionEnv, LocalExecutionEnv } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { benchWatch } from "./bench-watch.js";

const context = { abortSignal: undefined };
const quick = process.env.BENCH_QUICK === "1";

interface Row {
  name: string;
  unit: "µs" | "ms" | "MiB/s";
  reference: number;
  outpost: number;
}

/** Median wall time in µs of `iterations` sequential runs of `op` (after a short warm-up). */
async function medianMicros(iterations: number, op: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(20, iterations); i++) await op();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await op();
    samples.push((performance.now() - start) * 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function wallMillis(op: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await op();
  return performance.now() - start;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) throw result.error;
  return result.value;
}

async function fileRows(name: string, env: ExecutionEnv, root: string): Promise<Map<string, number>> {
  const n = quick ? 200 : 2000;
  const out = new Map<string, number>();
  env.cwd = root;
  await writeFile(join(root, "small.txt"), "x".repeat(4096));
  await mkdir(join(root, "many"), { recursive: true });
  await Promise.all(Array.from({ length: 1000 }, (_, i) => writeFile(join(root, "many", `f${i}`), "")));
  out.set("fileInfo", await medianMicros(n, async () => must(await env.fileInfo("small.txt", context))));
  out.set("readTextFile 4 KiB", await medianMicros(n, async () => must(await env.readTextFile("small.txt", context))));
  const body = "y".repeat(4096);
  out.set("writeFile 4 KiB", await medianMicros(n, async () => must(await env.writeFile("w.txt", body, context))));
  out.set(
    "listDir 1,000 entries",
    await medianMicros(quick ? 10 : 50, async () => must(await env.listDir("many", context))),
  );
  out.set(
    "1,000 concurrent fileInfo",
    (await wallMillis(() => Promise.all(Array.from({ length: 1000 }, () => env.fileInfo("small.txt", context))))) *
      1000,
  );
  const big = new Uint8Array(64 * 1024 * 1024).fill(7);
  const writeMs = await wallMillis(async () => must(await env.writeFile("big.bin", big, context)));
  out.set("writeFile 64 MiB", 64 / (writeMs / 1000));
  const readMs = await wallMillis(async () => must(await env.readBinaryFile("big.bin", context)));
  out.set("readBinaryFile 64 MiB", 64 / (readMs / 1000));
  out.set(
    'exec ["true"]',
    await medianMicros(quick ? 20 : 100, async () => must(await env.exec(["true"], undefined, context))),
  );
  const outputMiB = quick ? 32 : 256;
  let received = 0;
  const execMs = await wallMillis(async () =>
    must(
      await env.exec(
        `head -c ${outputMiB * 1024 * 1024} /dev/zero`,
        { onOutput: (text) => (received += text.length) },
        context,
      ),
    ),
  );
  if (received !== outputMiB * 1024 * 1024) throw new Error(`${name}: received ${received} bytes of output`);
  out.set(`exec output ${outputMiB} MiB via onOutput`, outputMiB / (execMs / 1000));
  out.set(
    "50 concurrent exec",
    (await wallMillis(() =>
      Promise.all(Array.from({ length: 50 }, () => env.exec("sleep 0.01", undefined, context))),
    )) * 1000,
  );
  return out;
}

const units: Record<string, Row["unit"]> = {
  "writeFile 64 MiB": "MiB/s",
  "readBinaryFile 64 MiB": "MiB/s",
};

async function main(): Promise<void> {
  const referenceRoot = await mkdtemp(join(tmpdir(), "outpost-bench-ref-"));
  const outpostRoot = await mkdtemp(join(tmpdir(), "outpost-bench-local-"));
  const local = new LocalExecutionEnv({ cwd: outpostRoot });
  try {
    const info = await local.connection.info();
    const helloMicros = await medianMicros(quick ? 200 : 2000, () =>
      local.connection.request("hello", { protocol: 1 }),
    );
    const lstatMicros = await medianMicros(quick ? 200 : 2000, () => lstat(join(referenceRoot, ".")));
    const reference = await fileRows("reference", new NodeExecutionEnv({ cwd: referenceRoot }), referenceRoot);
    const outpost = await fileRows("outpost", local, outpostRoot);
    const rows: Row[] = [...reference.keys()].map((name) => ({
      name,
      unit: units[name] ?? (name.includes("via onOutput") ? "MiB/s" : "µs"),
      reference: reference.get(name)!,
      outpost: outpost.get(name)!,
    }));
    console.log(`Outpost agent ${info.version} on ${info.os}/${info.arch}; node ${process.version}`);
    console.log(
      `hello round trip (median): ${helloMicros.toFixed(1)} µs; fs.promises.lstat in process: ${lstatMicros.toFixed(1)} µs`,
    );
    console.log("");
    console.log(
      `${"operation".padEnd(34)}${"reference".padStart(14)}${"outpost".padStart(14)}  unit   outpost/reference`,
    );
    for (const row of rows) {
      // For throughput a higher number is better, so the ratio is inverted to keep "> 1 = slower" everywhere.
      const ratio = row.unit === "MiB/s" ? row.reference / row.outpost : row.outpost / row.reference;
      console.log(
        `${row.name.padEnd(34)}${row.reference.toFixed(1).padStart(14)}${row.outpost.toFixed(1).padStart(14)}  ${row.unit.padEnd(6)} ${ratio.toFixed(2)}x ${row.unit === "MiB/s" ? "(time)" : ""}`,
      );
    }
  } finally {
    await local.cleanup(context);
    await local.close();
    await rm(referenceRoot, { recursive: true, force: true });
    await rm(outpostRoot, { recursive: true, force: true });
  }
}

/** The watching rows (tools/bench-watch.ts) in a scratch directory of their own. */
async function watchMain(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "outpost-bench-watch-"));
  try {
    await benchWatch(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

// BENCH_ONLY=watch runs only the watching rows.
if (process.env.BENCH_ONLY !== "watch") await main();
await watchMain();
