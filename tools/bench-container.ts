// `connectContainer` timed against its anchor, `podman exec <c> true` (one engine round trip, the floor of any
// exec-based transport), on the podman test fixture's busybox containers. Interleaved rounds; per candidate the
// median and the spread (min–max):
// - first: connectContainer into a fresh container (platform probe, copy, verify, start) and its first exec;
// - warm: connectContainer into a container that already has the agent (probe, then verify-and-start in one engine
//   command) and its first exec;
// - warm2: the same with verify and start as two engine commands (`verifiedStart: false`, the way before);
// - call: one `exec true` through a connected env (the agent running: no engine round trip);
// - anchor: `podman exec <c> true`.
// Run: node --import tsx tools/bench-container.ts [rounds]
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { connectContainer, getOrThrow } from "../sdk/src/index.js";
import { startPodman } from "../sdk/test/fixtures/podman.js";

const run = promisify(execFile);
const context = { abortSignal: undefined };

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return `${median.toFixed(0)} ms (${sorted[0].toFixed(0)}–${sorted[sorted.length - 1].toFixed(0)})`;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? "7");
  const podman = await startPodman();
  const samples: Record<string, number[]> = { first: [], warm: [], warm2: [], call: [], anchor: [] };
  try {
    const warmName = await podman.start({ rootfs: "busybox" });
    await getOrThrow(await connectContainer(warmName, { engine: "podman" })).close();
    for (let round = 0; round < rounds; round++) {
      const fresh = await podman.start({ rootfs: "busybox" });
      samples.first.push(
        await timed(async () => {
          const env = getOrThrow(await connectContainer(fresh, { engine: "podman" }));
          getOrThrow(await env.exec(["true"], {}, context));
          await env.close();
        }),
      );
      await podman.remove(fresh);
      let connected: Awaited<ReturnType<typeof connectContainer>> | undefined;
      samples.warm.push(
        await timed(async () => {
          connected = await connectContainer(warmName, { engine: "podman" });
          getOrThrow(await getOrThrow(connected).exec(["true"], {}, context));
        }),
      );
      const env = getOrThrow(connected!);
      samples.call.push(await timed(async () => void getOrThrow(await env.exec(["true"], {}, context))));
      await env.close();
      samples.warm2.push(
        await timed(async () => {
          connected = await connectContainer(warmName, { engine: "podman", verifiedStart: false });
          getOrThrow(await getOrThrow(connected).exec(["true"], {}, context));
        }),
      );
      await getOrThrow(connected!).close();
      samples.anchor.push(await timed(async () => void (await run("podman", ["exec", warmName, "true"]))));
    }
  } finally {
    await podman.dispose();
  }
  const anchor = [...samples.anchor].sort((a, b) => a - b)[Math.floor(samples.anchor.length / 2)];
  for (const [name, values] of Object.entries(samples)) {
    const median = [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    console.log(`${name.padEnd(7)} ${summary(values).padEnd(22)} ${(median / anchor).toFixed(2)}× podman exec true`);
  }
}

await main();
