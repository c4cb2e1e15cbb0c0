/**
 * `make bench-wan`: Outpost's WAN rows, run inside the rig (tools/wan/rig.sh), per profile:
 * - small operations over `connectSsh`: median ms and the same in round trips of the profile;
 * - connect: cold (the agent uploaded first) and warm (verified only), against `ssh host true`;
 * - 64 MiB up and down (tools/wan/bulk.ts) against `scp` and `sftp` over the same path;
 * - `listFiles` and `searchFiles` of a 100k-file tree against `ssh host fd`/`find`/`rg` (tools/wan/listing.ts).
 * Candidates and anchors interleave round by round; medians with the spread in brackets.
 *   tools/wan/rig.sh node --import tsx tools/wan/bench.ts [--profiles lan,wan,far,lossy] [--rounds N] [--mib N]
 *     [--bulk-rounds N] [--bulk-only RE] [--files N] [--tree-rounds N] [--sections small,connect,bulk,tree]
 * `--sections` picks the parts (default all), `--bulk-only` the Outpost rows of the 64 MiB part (the anchors always
 * run), `--files` the tree's size.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectSsh, type SshExecutionEnv, type SshTargetOptions } from "../../sdk/src/index.js";
import { bulkRows } from "./bulk.js";
import { type Profile, setProfile } from "./link.js";
import { listingRows, makeBenchTree, type Tree } from "./listing.js";
import { median, must } from "./measure.js";
import { type RigServer, startRigServer } from "./server.js";

const run = promisify(execFile);
const none = { abortSignal: undefined };

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

async function ms(body: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await body();
  return performance.now() - started;
}

/** The small operations of the table, each against files it prepares itself. */
function smallOps(env: SshExecutionEnv, dir: string): { name: string; body: () => Promise<unknown> }[] {
  writeFileSync(join(dir, "small.txt"), "x".repeat(1024));
  mkdirSync(join(dir, "d"), { recursive: true });
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, "d", `f${i}`), "");
  const ok = async (promise: Promise<{ ok: boolean; error?: unknown }>, name: string) => {
    const result = await promise;
    if (!result.ok) throw new Error(`${name}: ${String(result.error)}`);
  };
  return [
    { name: "fileInfo", body: () => ok(env.fileInfo("small.txt", none), "fileInfo") },
    { name: "exists", body: () => ok(env.exists("missing", none), "exists") },
    { name: "readTextFile 1 KiB", body: () => ok(env.readTextFile("small.txt", none), "readTextFile") },
    { name: "writeFile 1 KiB", body: () => ok(env.writeFile("w.txt", "y".repeat(1024), none), "writeFile") },
    { name: "listDir 20", body: () => ok(env.listDir("d", none), "listDir") },
    { name: "createTempFile", body: () => ok(env.createTempFile(undefined, none), "createTempFile") },
    { name: "canonicalPath", body: () => ok(env.canonicalPath("small.txt", none), "canonicalPath") },
    { name: "exec true", body: () => ok(env.exec("true", undefined, none), "exec") },
  ];
}

async function smallRows(env: SshExecutionEnv, dir: string, rttMs: number, rounds: number): Promise<string[]> {
  const ops = smallOps(env, dir);
  const times = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const op of ops) times.set(op.name, [...(times.get(op.name) ?? []), await ms(op.body)]);
  }
  return ops.map(({ name }) => {
    const samples = times.get(name) ?? [];
    const value = median(samples);
    const spread = `${Math.min(...samples).toFixed(1)}–${Math.max(...samples).toFixed(1)}`;
    return `  ${name.padEnd(20)} ${value.toFixed(1).padStart(8)} ms  ${(value / rttMs).toFixed(2).padStart(5)} RTT  [${spread}]`;
  });
}

/**
 * Connects cold (the agent removed first) and warm, against `ssh host true`: once on a new SSH connection (options
 * that share no connection with the bench's open env: their own copy of the known-hosts file), as a process's first
 * connect to a host is, and once on the connection the bench's env holds, as every later env's connect is (SSH7).
 */
async function connectRows(server: RigServer, dir: string, rttMs: number, rounds: number): Promise<string[]> {
  const agents = join(server.sshd.home, ".outpost");
  const known = server.sshd.options.knownHostsFile;
  const fresh = { ...server.sshd.options, knownHostsFile: join(server.sshd.dir, "known_hosts-bench-fresh") };
  if (typeof known === "string") copyFileSync(known, fresh.knownHostsFile);
  const connect = async (cold: boolean, options: SshTargetOptions) => {
    if (cold) rmSync(agents, { recursive: true, force: true });
    const env = must(await connectSsh(server.sshd.target, { ...options, cwd: dir }), "connectSsh");
    await env.connection.close();
  };
  const sshTrue = () => run("ssh", [...server.sshArgs, server.host, "true"]);
  const times: Record<string, number[]> = {
    "cold, new connection": [],
    "warm, new connection": [],
    "cold, shared": [],
    "warm, shared": [],
    "ssh host true": [],
  };
  for (let round = 0; round < rounds; round++) {
    times["cold, new connection"].push(await ms(() => connect(true, fresh)));
    times["warm, new connection"].push(await ms(() => connect(false, fresh)));
    times["cold, shared"].push(await ms(() => connect(true, server.sshd.options)));
    times["warm, shared"].push(await ms(() => connect(false, server.sshd.options)));
    times["ssh host true"].push(await ms(sshTrue));
  }
  const anchor = median(times["ssh host true"]);
  return Object.entries(times).map(([name, samples]) => {
    const value = median(samples);
    const spread = `${Math.min(...samples).toFixed(0)}–${Math.max(...samples).toFixed(0)}`;
    return `  ${name.padEnd(20)} ${value.toFixed(0).padStart(8)} ms  ${(value / rttMs).toFixed(1).padStart(5)} RTT  ${(value / anchor).toFixed(2)}× ssh host true  [${spread}]`;
  });
}

async function main(): Promise<void> {
  const profiles = argument("profiles", "lan,wan,far,lossy").split(",") as Profile[];
  const rounds = Number(argument("rounds", "5"));
  const bulkRounds = Number(argument("bulk-rounds", "1"));
  const bulkOnly = new RegExp(argument("bulk-only", "."));
  const mib = Number(argument("mib", "64"));
  const files = Number(argument("files", "100000"));
  const treeRounds = Number(argument("tree-rounds", "3"));
  const sections = new Set(argument("sections", "small,connect,bulk,tree").split(","));
  const server = await startRigServer();
  try {
    const dir = join(server.sshd.home, "bench");
    mkdirSync(dir, { recursive: true });
    let tree: Tree | undefined;
    if (sections.has("tree")) {
      const started = performance.now();
      tree = await makeBenchTree(dir, files);
      console.log(`tree: ${files} files, made in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    for (const profile of profiles) {
      const { shape } = await setProfile(profile);
      // A connection of its own per profile, made at that profile: a live TCP connection whose path changes shape
      // keeps the old path's model (BBR's minimum round trip for 10 s, its bandwidth for 10 round trips), so the
      // first transfers after a switch ran cwnd-limited (measured with read-trace.ts --after; docs/wan.md).
      const env = must(await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: dir }), "connectSsh");
      try {
        const rttMs = 2 * shape.delayMs;
        console.log(
          `\n${profile}: ${rttMs} ms RTT, ${(shape.rateBits / 1e6).toFixed(0)} Mbit/s, ${shape.loss * 100}% loss`,
        );
        if (sections.has("small")) {
          console.log(` small operations (median of ${rounds}, warm connection)`);
          for (const line of await smallRows(env, dir, rttMs, rounds)) console.log(line);
        }
        if (sections.has("connect")) {
          console.log(` connect (median of ${rounds})`);
          for (const line of await connectRows(server, dir, rttMs, rounds)) console.log(line);
        }
        if (sections.has("bulk")) {
          console.log(` ${mib} MiB (median of ${bulkRounds})`);
          for (const line of await bulkRows(server, env, shape, mib, bulkRounds, bulkOnly)) console.log(line);
        }
        if (tree !== undefined) {
          console.log(` tree (median of ${treeRounds})`);
          for (const line of await listingRows(server, env, tree, treeRounds)) console.log(line);
        }
      } finally {
        await env.connection.close();
      }
    }
  } finally {
    await server.stop();
  }
}

await main();
