/**
 * Bulk transfers across the WAN rig: 64 MiB through Outpost over SSH (`connectSsh`, ssh2) — `writeFile` with and
 * without an abort signal, `appendFile`, `readBinaryFile` — against OpenSSH's `scp` and `sftp` over the same path
 * in the same run, interleaved round by round; medians in MiB/s and each Outpost row as a share of the better
 * anchor in its direction. Run inside the rig: `tools/wan/rig.sh node --import tsx tools/wan/bulk.ts [--profiles
 * wan,far] [--rounds N] [--mib N]`.
 */
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectSsh, type SshExecutionEnv } from "../../sdk/src/index.js";
import { type Profile, setProfile } from "./link.js";
import { startRigServer } from "./server.js";

const run = promisify(execFile);
const MiB = 1024 * 1024;

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

const profiles = argument("profiles", "wan,far").split(",") as Profile[];
const rounds = Number(argument("rounds", "1"));
const size = Number(argument("mib", "64")) * MiB;
/** Only the candidates whose name matches this pattern (and the anchors of their direction). */
const only = new RegExp(argument("only", "."));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function timed(body: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await body();
  return (performance.now() - started) / 1000;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: unknown }, what: string): T {
  if (!result.ok) throw new Error(`${what}: ${String(result.error)}`);
  return result.value;
}

const server = await startRigServer();
try {
  const remoteDir = join(server.sshd.home, "bulk");
  mkdirSync(remoteDir, { recursive: true });
  const localDir = join(server.sshd.dir, "local");
  mkdirSync(localDir, { recursive: true });
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
  const source = join(localDir, "source.bin");
  writeFileSync(source, content);
  // What the downloads read (the two namespaces share this machine's file system).
  writeFileSync(join(remoteDir, "down.bin"), content);
  const env: SshExecutionEnv = must(
    await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: remoteDir }),
    "connectSsh",
  );
  const remote = (name: string) => join(remoteDir, name);
  const sftpBatch = join(localDir, "batch");
  const sftp = async (command: string) => {
    writeFileSync(sftpBatch, `${command}\n`);
    await run("sftp", [...server.copyArgs, "-q", "-b", sftpBatch, server.host]);
  };
  const candidates: { name: string; direction: "up" | "down"; body: () => Promise<void> }[] = [
    {
      name: "writeFile",
      direction: "up",
      body: async () => void must(await env.writeFile("w.bin", content, { abortSignal: undefined }), "writeFile"),
    },
    {
      name: "writeFile + signal",
      direction: "up",
      body: async () =>
        void must(await env.writeFile("ws.bin", content, { abortSignal: new AbortController().signal }), "writeFile"),
    },
    {
      name: "appendFile + signal",
      direction: "up",
      body: async () => {
        rmSync(remote("a.bin"), { force: true });
        must(await env.appendFile("a.bin", content, { abortSignal: new AbortController().signal }), "appendFile");
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
        const bytes = must(await env.readBinaryFile("down.bin", { abortSignal: undefined }), "readBinaryFile");
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
  candidates.splice(0, candidates.length, ...candidates.filter((c) => only.test(c.name) || /^(scp|sftp)/.test(c.name)));
  const lines: string[] = [];
  for (const profile of profiles) {
    const { shape } = await setProfile(profile);
    const seconds = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      // Each round in a different order, so no candidate always follows the same one.
      const order = candidates.map((_, index) => (index + round) % candidates.length);
      for (const index of order) {
        const candidate = candidates[index];
        const time = await timed(candidate.body);
        seconds.set(candidate.name, [...(seconds.get(candidate.name) ?? []), time]);
      }
    }
    const rate = (name: string) => size / MiB / median(seconds.get(name) ?? [Number.NaN]);
    const cap = shape.rateBits / 8 / MiB;
    lines.push(
      `${profile}: ${2 * shape.delayMs} ms RTT, ${(shape.rateBits / 1e6).toFixed(0)} Mbit/s = ${cap.toFixed(2)} MiB/s; ${size / MiB} MiB, ${rounds} round(s), median MiB/s`,
    );
    for (const direction of ["up", "down"] as const) {
      const anchors = candidates.filter((c) => c.direction === direction && /^(scp|sftp)/.test(c.name));
      const best = Math.max(...anchors.map((c) => rate(c.name)));
      for (const candidate of candidates.filter((c) => c.direction === direction)) {
        const mine = rate(candidate.name);
        const spread = (seconds.get(candidate.name) ?? []).map((s) => (size / MiB / s).toFixed(2)).join(" ");
        lines.push(
          `  ${candidate.name.padEnd(20)} ${mine.toFixed(2).padStart(6)} MiB/s  ${((mine / cap) * 100).toFixed(0).padStart(3)}% of cap  ${((mine / best) * 100).toFixed(0).padStart(3)}% of best anchor  [${spread}]`,
        );
      }
    }
    console.log(lines.slice(-9).join("\n"));
  }
  await env.connection.close();
} finally {
  await server.stop();
}
