/**
 * Bulk transfers across the WAN rig: N MiB through Outpost over SSH (`connectSsh`, ssh2) — `writeFile` with and
 * without an abort signal, `appendFile`, `readBinaryFile` — against OpenSSH's `scp` and `sftp` over the same path
 * in the same run, interleaved round by round (each round in a rotated order); medians in MiB/s, each row as a
 * share of the profile's cap and of the better anchor in its direction. Used by tools/wan/bench.ts; alone:
 *   tools/wan/rig.sh node --import tsx tools/wan/bulk.ts [--profiles wan,far] [--rounds N] [--mib N] [--only RE]
 * `--only` picks Outpost's rows; the anchors of their directions run with them.
 */
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectSsh, type SshExecutionEnv } from "../../sdk/src/index.js";
import { type Profile, type Shape, setProfile } from "./link.js";
import { median, must } from "./measure.js";
import { type RigServer, startRigServer } from "./server.js";

const run = promisify(execFile);
const MiB = 1024 * 1024;

async function seconds(body: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await body();
  return (performance.now() - started) / 1000;
}

/** The table's rows for the current profile (`shape`), through `env` and the anchors of `server`. */
export async function bulkRows(
  server: RigServer,
  env: SshExecutionEnv,
  shape: Shape,
  mib: number,
  rounds: number,
  only: RegExp = /./,
): Promise<string[]> {
  const size = mib * MiB;
  const remoteDir = join(server.sshd.home, "bulk");
  const localDir = join(server.sshd.dir, "local");
  mkdirSync(remoteDir, { recursive: true });
  mkdirSync(localDir, { recursive: true });
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
  const source = join(localDir, "source.bin");
  writeFileSync(source, content);
  // What the downloads read (the two namespaces share this machine's file system).
  writeFileSync(join(remoteDir, "down.bin"), content);
  const remote = (name: string) => join(remoteDir, name);
  const sftpBatch = join(localDir, "batch");
  const sftp = async (command: string) => {
    writeFileSync(sftpBatch, `${command}\n`);
    await run("sftp", [...server.copyArgs, "-q", "-b", sftpBatch, server.host]);
  };
  const signal = () => ({ abortSignal: new AbortController().signal });
  const all: { name: string; direction: "up" | "down"; body: () => Promise<void> }[] = [
    {
      name: "writeFile",
      direction: "up",
      body: async () =>
        void must(await env.writeFile(remote("w.bin"), content, { abortSignal: undefined }), "writeFile"),
    },
    {
      name: "writeFile + signal",
      direction: "up",
      body: async () => void must(await env.writeFile(remote("ws.bin"), content, signal()), "writeFile"),
    },
    {
      name: "appendFile + signal",
      direction: "up",
      body: async () => {
        rmSync(remote("a.bin"), { force: true });
        must(await env.appendFile(remote("a.bin"), content, signal()), "appendFile");
      },
    },
    {
      name: "scp up",
      direction: "up",
      body: async () =>
        void (await run("scp", [...server.copyArgs, "-q", source, `${server.host}:${remote("scp.bin")}`])),
    },
    { name: "sftp put", direction: "up", body: () => sftp(`put ${source} ${remote("sftp.bin")}`) },
    {
      name: "readBinaryFile",
      direction: "down",
      body: async () => {
        const bytes = must(await env.readBinaryFile(remote("down.bin"), { abortSignal: undefined }), "readBinaryFile");
        if (bytes.length !== size) throw new Error(`read ${bytes.length} bytes`);
      },
    },
    {
      name: "scp down",
      direction: "down",
      body: async () =>
        void (await run("scp", [
          ...server.copyArgs,
          "-q",
          `${server.host}:${remote("down.bin")}`,
          join(localDir, "scp.bin"),
        ])),
    },
    {
      name: "sftp get",
      direction: "down",
      body: () => sftp(`get ${remote("down.bin")} ${join(localDir, "sftp.bin")}`),
    },
  ];
  const anchor = (name: string) => /^(scp|sftp)/.test(name);
  // The anchors of each direction a chosen row goes in.
  const chosen = all.filter((c) => !anchor(c.name) && only.test(c.name));
  const candidates = all.filter(
    (c) => chosen.includes(c) || (anchor(c.name) && chosen.some((d) => d.direction === c.direction)),
  );
  const times = new Map<string, number[]>();
  // scp and sftp open their own SSH connection each time; Outpost's env is connected already. What a connection
  // costs, `ssh host true`, is measured in the same rounds and taken off the anchors' times.
  const setup: number[] = [];
  for (let round = 0; round < rounds; round++) {
    setup.push(await seconds(async () => void (await run("ssh", [...server.sshArgs, server.host, "true"]))));
    for (let k = 0; k < candidates.length; k++) {
      const candidate = candidates[(k + round) % candidates.length];
      const time = await seconds(candidate.body);
      times.set(candidate.name, [...(times.get(candidate.name) ?? []), time]);
    }
  }
  const connectCost = median(setup);
  rmSync(remoteDir, { recursive: true, force: true });
  rmSync(localDir, { recursive: true, force: true });
  const transfer = (name: string, time: number) => (anchor(name) ? Math.max(time - connectCost, 1e-3) : time);
  const rate = (name: string) => mib / median((times.get(name) ?? [Number.NaN]).map((time) => transfer(name, time)));
  const cap = shape.rateBits / 8 / MiB;
  const lines: string[] = [];
  for (const direction of ["up", "down"] as const) {
    const best = Math.max(
      ...candidates.filter((c) => c.direction === direction && anchor(c.name)).map((c) => rate(c.name)),
    );
    for (const candidate of candidates.filter((c) => c.direction === direction)) {
      const mine = rate(candidate.name);
      const spread = (times.get(candidate.name) ?? [])
        .map((s) => (mib / transfer(candidate.name, s)).toFixed(2))
        .join(" ");
      const ofCap = cap > 0 ? `${((mine / cap) * 100).toFixed(0).padStart(3)}% of cap` : "";
      lines.push(
        `  ${candidate.name.padEnd(20)} ${mine.toFixed(2).padStart(8)} MiB/s  ${ofCap}  ${((mine / best) * 100).toFixed(0).padStart(3)}% of the better anchor  [${spread}]`,
      );
    }
  }
  lines.push(
    `  (scp and sftp: their time less ${connectCost.toFixed(2)} s, the median \`ssh host true\` of these rounds)`,
  );
  return lines;
}

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

async function main(): Promise<void> {
  const profiles = argument("profiles", "wan,far").split(",") as Profile[];
  const rounds = Number(argument("rounds", "1"));
  const mib = Number(argument("mib", "64"));
  const only = new RegExp(argument("only", "."));
  const server = await startRigServer();
  try {
    const env = must(
      await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: server.sshd.home }),
      "connectSsh",
    );
    try {
      for (const profile of profiles) {
        const { shape } = await setProfile(profile);
        console.log(
          `${profile}: ${2 * shape.delayMs} ms RTT, ${(shape.rateBits / 1e6).toFixed(0)} Mbit/s; ${mib} MiB, median of ${rounds}`,
        );
        for (const line of await bulkRows(server, env, shape, mib, rounds, only)) console.log(line);
      }
    } finally {
      await env.connection.close();
    }
  } finally {
    await server.stop();
  }
}

if (process.argv[1]?.endsWith("bulk.ts")) await main();
