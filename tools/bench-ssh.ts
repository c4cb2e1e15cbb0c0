// `make bench` (SSH part): Outpost over a loopback sshd next to what users would pick instead — ssh2's SFTP on one
// connection, an exec channel per command on that connection, and a fresh `ssh host true` per command — all in one
// run, candidates interleaved in rounds; medians with their interquartile range, and ratios against the anchors.
// Also the first connection: cold (the agent is uploaded) and warm (only its SHA-256 is verified).
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import type { Client, SFTPWrapper } from "ssh2";
import { openRoute } from "../sdk/src/ssh/client.js";
import { acceptHostKey, connectSsh, type SshExecutionEnv } from "../sdk/src/ssh/connect.js";
import { resolveRoute } from "../sdk/src/ssh/target.js";
import { isolateHome, startSshd } from "../sdk/test/fixtures/sshd.js";

const run = promisify(execFile);
const context = { abortSignal: undefined };
const quick = process.env.BENCH_QUICK === "1";
const ROUNDS = quick ? 3 : 7;

type Op = () => Promise<unknown>;

interface Stat {
  median: number;
  q1: number;
  q3: number;
}

function stat(samples: number[]): Stat {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { median: at(0.5), q1: at(0.25), q3: at(0.75) };
}

/** Runs every candidate `perRound` times per round, rounds interleaved; per-call times in µs. */
async function interleaved(candidates: Record<string, Op>, perRound: number): Promise<Record<string, Stat>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  for (const op of Object.values(candidates)) await op(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, op] of Object.entries(candidates)) {
      for (let i = 0; i < perRound; i++) {
        const start = performance.now();
        await op();
        samples[name].push((performance.now() - start) * 1000);
      }
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, stat(values)]));
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) throw result.error;
  return result.value;
}

function sftpOf(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
}

function call<T>(start: (done: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value as T))));
}

function execTrue(client: Client): Promise<void> {
  return new Promise((resolve, reject) =>
    client.exec("true", (error, channel) => {
      if (error) return reject(error);
      channel.on("close", () => resolve());
      channel.resume();
    }),
  );
}

function format(value: Stat, unit: string): string {
  const digits = unit === "ms" ? 1 : 0;
  return `${value.median.toFixed(digits)} (${value.q1.toFixed(digits)}–${value.q3.toFixed(digits)})`;
}

async function main(): Promise<void> {
  const home = await isolateHome();
  const sshd = await startSshd();
  const root = await mkdtemp(join(tmpdir(), "outpost-bench-ssh-"));
  let env: SshExecutionEnv | undefined;
  try {
    must(await acceptHostKey(sshd.target, sshd.fingerprint, sshd.options));
    const times: Record<string, number[]> = { cold: [], warm: [] };
    for (let round = 0; round < (quick ? 2 : 5); round++) {
      await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
      for (const kind of ["cold", "warm"]) {
        const start = performance.now();
        const connected = must(await connectSsh(sshd.target, sshd.options));
        times[kind].push(performance.now() - start);
        await connected.close();
      }
    }
    env = must(await connectSsh(sshd.target, { ...sshd.options, cwd: root }));
    const route = await openRoute(await resolveRoute(sshd.target, sshd.options), sshd.options, { kind: "verify" });
    const sftp = await sftpOf(route.client);
    await writeFile(join(root, "small.txt"), "x".repeat(4096));
    await mkdir(join(root, "many"));
    await Promise.all(Array.from({ length: 1000 }, (_, i) => writeFile(join(root, "many", `f${i}`), "")));
    const small = join(root, "small.txt");
    const body = Buffer.from("y".repeat(4096));
    const big = new Uint8Array(64 * 1024 * 1024).fill(7);
    await writeFile(join(root, "big.bin"), big);
    const sshArgs = [
      "-F",
      sshd.options.configFile as string,
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${sshd.options.knownHostsFile}`,
      "-o",
      "IdentitiesOnly=yes",
      "-i",
      sshd.clientKey,
      "-p",
      String(sshd.port),
      sshd.target.split(":")[0],
      "true",
    ];
    const e = env;
    const n = quick ? 20 : 100;
    const rows: [string, string, Record<string, Stat>][] = [
      [
        "fileInfo / stat",
        "µs",
        await interleaved(
          {
            outpost: async () => must(await e.fileInfo("small.txt", context)),
            sftp: () => call((done) => sftp.stat(small, done)),
          },
          n,
        ),
      ],
      [
        "readTextFile 4 KiB",
        "µs",
        await interleaved(
          {
            outpost: async () => must(await e.readTextFile("small.txt", context)),
            sftp: () => call((done) => sftp.readFile(small, "utf8", done)),
          },
          n,
        ),
      ],
      [
        "writeFile 4 KiB",
        "µs",
        await interleaved(
          {
            outpost: async () => must(await e.writeFile("w.txt", body, context)),
            sftp: () => call((done) => sftp.writeFile(join(root, "s.txt"), body, done)),
          },
          n,
        ),
      ],
      [
        "listDir 1,000 / readdir",
        "µs",
        await interleaved(
          {
            outpost: async () => must(await e.listDir("many", context)),
            sftp: () => call((done) => sftp.readdir(join(root, "many"), done)),
          },
          quick ? 5 : 20,
        ),
      ],
      [
        'exec(["true"])',
        "µs",
        await interleaved(
          {
            outpost: async () => must(await e.exec(["true"], undefined, context)),
            "ssh2 exec channel": () => execTrue(route.client),
            "fresh ssh host true": () => run("ssh", sshArgs),
          },
          quick ? 5 : 20,
        ),
      ],
      [
        "read 64 MiB",
        "ms",
        await interleaved(
          {
            outpost: async () => must(await e.readBinaryFile("big.bin", context)),
            sftp: () => call((done) => sftp.fastGet(join(root, "big.bin"), join(root, "got.bin"), done)),
          },
          1,
        ),
      ],
      [
        "write 64 MiB",
        "ms",
        await interleaved(
          {
            outpost: async () => must(await e.writeFile("big-out.bin", big, context)),
            sftp: () => call((done) => sftp.fastPut(join(root, "big.bin"), join(root, "put.bin"), done)),
          },
          1,
        ),
      ],
    ];
    for (const row of rows) {
      if (row[1] === "ms")
        for (const value of Object.values(row[2]))
          for (const key of ["median", "q1", "q3"] as const) value[key] /= 1000;
    }
    console.log(`Outpost over SSH (loopback OpenSSH sshd, ssh2 client); node ${process.version}; ${ROUNDS} rounds`);
    console.log("median (interquartile range) per call; ratio = outpost / anchor (> 1 = slower)\n");
    console.log(
      `${"operation".padEnd(24)}${"outpost".padStart(24)}${"anchor".padStart(26)}  anchor name            ratio`,
    );
    for (const [name, unit, stats] of rows) {
      const outpost = stats.outpost;
      for (const [anchor, value] of Object.entries(stats)) {
        if (anchor === "outpost") continue;
        console.log(
          `${`${name} [${unit}]`.padEnd(24)}${format(outpost, unit).padStart(24)}${format(value, unit).padStart(26)}  ${anchor.padEnd(22)} ${(outpost.median / value.median).toPrecision(2)}x`,
        );
      }
    }
    const cold = stat(times.cold);
    const warm = stat(times.warm);
    console.log(`\nfirst connection, cold (upload + verify + start) [ms]: ${format(cold, "ms")}`);
    console.log(`first connection, warm (verify + start) [ms]:          ${format(warm, "ms")}`);
    sftp.end();
    route.close();
  } finally {
    await env?.close();
    await rm(root, { recursive: true, force: true });
    await sshd.stop();
    await rm(home, { recursive: true, force: true });
  }
}

await main();
