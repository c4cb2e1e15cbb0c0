/**
 * Why a download is as fast as it is: N MiB down through Outpost (`readBinaryFile`) and through `scp`/`sftp`,
 * interleaved, while the server's TCP sender is sampled (`ss -ti` in the server namespace every 50 ms): how long it
 * had data queued (busy), was held by the receiver's window (rwnd_limited) or its send buffer (sndbuf_limited), and
 * had nothing to send (app-limited: the rest); its congestion window, retransmissions and unsent bytes; and the
 * client's unread bytes (Recv-Q on the client's socket). Run in the rig:
 *   tools/wan/rig.sh node --import tsx tools/wan/read-trace.ts [--profile lossy] [--mib 32] [--rounds 2] [--fresh]
 *     [--after PROFILE]
 * Outpost's reads run on one warm connection, with `--fresh` each on a new one (as scp's and sftp's), with
 * `--after P` on a connection that carried a download at profile P first (as in the bench); each line shows the
 * server's BBR state (bandwidth, minimum round trip) for the connection at the start.
 * What it found is in docs/wan.md ("Why reads were slow at `lossy`").
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectSsh } from "../../sdk/src/index.js";
import { linkState, type Profile, rig, setProfile } from "./link.js";
import { median, must } from "./measure.js";
import { startRigServer } from "./server.js";

const run = promisify(execFile);
const MiB = 1024 * 1024;

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

interface Sock {
  local: string;
  peer: string;
  recvQ: number;
  fields: Map<string, string>;
}

/** `ss -tinH state established` in a namespace, parsed per connection. */
async function sockets(ns: string | undefined, filter: string): Promise<Sock[]> {
  const args = ["-tinH", "state", "established", filter];
  const { stdout } = ns === undefined ? await run("ss", args) : await run("ip", ["netns", "exec", ns, "ss", ...args]);
  const out: Sock[] = [];
  for (const line of stdout.split("\n")) {
    if (line.trim() === "") continue;
    if (!/^\s/.test(line)) {
      const [recvQ, , local, peer] = line.trim().split(/\s+/);
      out.push({ local, peer, recvQ: Number(recvQ), fields: new Map() });
      continue;
    }
    const sock = out.at(-1);
    if (sock === undefined) continue;
    for (const token of line.trim().split(/\s+/)) {
      const colon = token.indexOf(":");
      if (colon > 0) sock.fields.set(token.slice(0, colon), token.slice(colon + 1));
      else sock.fields.set(token, "");
    }
  }
  return out;
}

const num = (sock: Sock | undefined, key: string) => Number.parseFloat(sock?.fields.get(key) ?? "0") || 0;

async function main(): Promise<void> {
  const profile = argument("profile", "lossy") as Profile;
  const mib = Number(argument("mib", "32"));
  const rounds = Number(argument("rounds", "2"));
  const fresh = process.argv.includes("--fresh");
  const { serverNs } = rig();
  const server = await startRigServer();
  const port = server.sshd.port;
  try {
    const dir = join(server.sshd.home, "trace");
    mkdirSync(dir, { recursive: true });
    const content = Buffer.alloc(mib * MiB);
    for (let i = 0; i < content.length; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
    writeFileSync(join(dir, "down.bin"), content);
    const localDir = join(server.sshd.dir, "trace-local");
    mkdirSync(localDir, { recursive: true });
    const connect = async () =>
      must(await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: dir }), "connectSsh");
    let env = await connect();
    // With --after P, the connection first carries a download at profile P, as in the bench, where the profiles
    // follow one another on one connection.
    const after = argument("after", "");
    if (after !== "") {
      await setProfile(after as Profile);
      must(await env.readBinaryFile("down.bin", { abortSignal: undefined }), `a download at ${after}`);
    }
    const { shape } = await setProfile(profile);
    console.log(`${profile}: ${2 * shape.delayMs} ms RTT, ${shape.rateBits / 1e6} Mbit/s, ${shape.loss * 100}% loss`);
    const candidates: { name: string; body: () => Promise<unknown>; prepare?: () => Promise<void> }[] = [
      {
        name: "readBinaryFile",
        body: async () => must(await env.readBinaryFile("down.bin", { abortSignal: undefined }), "readBinaryFile"),
        // With --fresh, on a connection of its own made just before (not timed), as scp's and sftp's are.
        prepare: fresh
          ? async () => {
              await env.connection.close();
              env = await connect();
            }
          : undefined,
      },
      {
        name: "sftp get",
        body: async () => {
          writeFileSync(join(localDir, "batch"), `get ${join(dir, "down.bin")} ${join(localDir, "y")}\n`);
          await run("sftp", [...server.copyArgs, "-q", "-b", join(localDir, "batch"), server.host]);
        },
      },
      {
        name: "scp down",
        body: () =>
          run("scp", [...server.copyArgs, "-q", `${server.host}:${join(dir, "down.bin")}`, join(localDir, "x")]),
      },
    ];
    // Warm the env's connection once (TCP's first transfer on a fresh connection starts from slow start).
    if (!fresh && after === "") must(await env.readBinaryFile("down.bin", { abortSignal: undefined }), "warm-up");
    const results = new Map<string, string[]>();
    const rates = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < candidates.length; k++) {
        const candidate = candidates[(k + round) % candidates.length];
        await candidate.prepare?.();
        const before = new Map((await sockets(serverNs, `( sport = :${port} )`)).map((s) => [s.peer, s]));
        const link0 = await linkState();
        const samples: { server: Sock[]; client: Sock[] }[] = [];
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            samples.push({
              server: await sockets(serverNs, `( sport = :${port} )`),
              client: await sockets(undefined, `( dport = :${port} )`),
            });
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
        const started = performance.now();
        await candidate.body();
        const seconds = (performance.now() - started) / 1000;
        sampling = false;
        await sampler;
        const link1 = await linkState();
        // The transfer's connection: the one that delivered the most bytes meanwhile (scp's is gone at the end,
        // so each connection's last sample counts).
        const last = new Map<string, Sock>();
        for (const sample of samples) for (const sock of sample.server) last.set(sock.peer, sock);
        for (const sock of await sockets(serverNs, `( sport = :${port} )`)) last.set(sock.peer, sock);
        let best: Sock | undefined;
        let bestBytes = -1;
        for (const sock of last.values()) {
          const bytes = num(sock, "bytes_acked") - num(before.get(sock.peer), "bytes_acked");
          if (bytes > bestBytes) [best, bestBytes] = [sock, bytes];
        }
        const prior = before.get(best?.peer ?? "");
        const delta = (key: string) => num(best, key) - num(prior, key);
        const chrono = (key: string) => {
          const value = best?.fields.get(key) ?? "0";
          const previous = prior?.fields.get(key) ?? "0";
          return Number.parseFloat(value) - Number.parseFloat(previous);
        };
        const mine = samples.map((s) => s.server.find((x) => x.peer === best?.peer)).filter((x) => x !== undefined);
        const clientSide = samples
          .map((s) => s.client.find((x) => x.local === best?.peer))
          .filter((x) => x !== undefined);
        const cwnds = mine.map((s) => num(s, "cwnd"));
        const unacked = mine.map((s) => num(s, "unacked"));
        const notsent = mine.map((s) => num(s, "notsent"));
        const recvQ = clientSide.map((s) => s.recvQ);
        const ms = seconds * 1000;
        const busy = chrono("busy");
        const rate = mib / seconds;
        rates.set(candidate.name, [...(rates.get(candidate.name) ?? []), rate]);
        const line =
          `${rate.toFixed(2)} MiB/s ${seconds.toFixed(1)} s; at the start ${prior?.fields.get("bbr") ?? "(a new connection)"}` +
          `; busy ${((busy / ms) * 100).toFixed(0)}%` +
          ` rwnd_limited ${((chrono("rwnd_limited") / ms) * 100).toFixed(0)}%` +
          ` sndbuf_limited ${((chrono("sndbuf_limited") / ms) * 100).toFixed(0)}%;` +
          ` retrans ${(delta("bytes_retrans") / MiB).toFixed(2)} MiB;` +
          ` cwnd median ${median(cwnds)} max ${Math.max(...cwnds)};` +
          ` unacked median ${median(unacked)} pkts; notsent median ${(median(notsent) / 1024).toFixed(0)} KiB` +
          ` zero ${notsent.filter((n) => n === 0).length}/${notsent.length};` +
          ` client Recv-Q median ${(median(recvQ) / 1024).toFixed(0)} KiB max ${(Math.max(...recvQ) / 1024).toFixed(0)} KiB;` +
          ` link drops loss ${link1.ba.dropLoss - link0.ba.dropLoss}/${link1.ab.dropLoss - link0.ab.dropLoss}` +
          ` queue ${link1.ba.dropQueue - link0.ba.dropQueue}`;
        results.set(candidate.name, [...(results.get(candidate.name) ?? []), line]);
        console.log(`${candidate.name.padEnd(24)} ${line}`);
      }
    }
    console.log("\nmedians:");
    for (const [name, values] of rates) {
      console.log(
        `  ${name.padEnd(24)} ${median(values).toFixed(2)} MiB/s [${values.map((v) => v.toFixed(2)).join(" ")}]`,
      );
    }
    await env.connection.close();
  } finally {
    await server.stop();
  }
}

await main();
