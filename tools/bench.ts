// `make bench`: every row runs its candidates interleaved in rounds (tools/bench-harness.ts) and prints the median
// of the round medians, their min–max, and ratios against the anchors of the same run.
//
// Candidates: `reference` (the in-process NodeExecutionEnv of spec/, also an anchor), `local` (LocalExecutionEnv),
// `pipe` (RemoteExecutionEnv over a Connection that spawns the agent: the generic remote path on a local pipe),
// `ssh2` and `openssh` (connectSsh through each transport to a loopback sshd, when /usr/sbin/sshd is installed).
// Anchors: `node` (fs.promises / child_process.spawn in process), `echo` (a hello request's bytes through `cat` in a
// child: the pipe's floor; beside it `go-cat` and `go-poll`, the same echo through a Go process, tools/benchfloor),
// `cat` in the 64 MiB rows (the bytes through a spawned `cat`'s pipe: the bulk floor, tools/bench-pipe-floor.ts),
// `sftp` (ssh2 SFTP on one connection), `ssh2-cat` / `ssh-cat` (the same echo on an ssh2
// channel / through `ssh -T host cat`), `ssh2-exec` (an exec channel on one connection), `ssh-true` (a fresh
// `ssh host true`). Then the listFiles rows (tools/bench-list-files.ts), the searchFiles rows (tools/bench-search-files.ts,
// locally and over the same sshd), pi's grep (tools/bench-pi-grep.ts) and the watching rows (tools/bench-watch.ts). The
// sshd and its connections are started once, by the first section that uses them, and stopped at the end of the run.
//
// Flags: --no-ssh (leave the SSH side out), --quick (a smoke run: 2 rounds, few calls, 1 MiB instead of 64 MiB, smaller bursts; its row names differ,
// so it is never compared with a full run), --json <file|-> (the rows as JSON; `-` prints JSON on stdout and the
// table on stderr), --only <sections> (comma-separated: ops, list-files, search-files, pi-grep, watch), --compare <before.json> <after.json>
// (prints after/before per row and candidate, without measuring), --pin <cpu> (runs the bench, and every process it
// starts — agents, sshd, cat — on that one CPU, see pinToCpu).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { appendFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import type { SFTPWrapper } from "ssh2";
import {
  Connection,
  type ExecutionEnv,
  LocalExecutionEnv,
  packagedAgent,
  RemoteExecutionEnv,
} from "../sdk/src/index.js";
import { encodeFrame, FrameType } from "../sdk/src/wire/frame.js";
import { type Echo, echoThrough } from "./bench-echo.js";
import {
  burst,
  type Candidate,
  formatTable,
  measureRow,
  processCpuSeconds,
  type RowResult,
  type RowSpec,
} from "./bench-harness.js";
import { benchListFiles } from "./bench-list-files.js";
import { benchPiGrep } from "./bench-pi-grep.js";
import { catRead, catWrite } from "./bench-pipe-floor.js";
import { benchSearchFiles } from "./bench-search-files.js";
import { type SshSide, sshUnavailable, startSshSide } from "./bench-ssh.js";
import { benchWatch } from "./bench-watch.js";

const context = { abortSignal: undefined };

/** Command-line options. */
interface Options {
  quick: boolean;
  /** Leave out the SSH candidates and anchors (the smoke test). */
  noSsh: boolean;
  json?: string;
  sections: Set<string>;
  /** The CPU the whole run is pinned to (`--pin`). */
  pin?: string;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    quick: false,
    noSsh: false,
    sections: new Set(["ops", "list-files", "search-files", "pi-grep", "watch"]),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") options.quick = true;
    else if (arg === "--no-ssh") options.noSsh = true;
    else if (arg === "--json") options.json = argv[++i] ?? "-";
    else if (arg === "--only") options.sections = new Set((argv[++i] ?? "").split(","));
    else if (arg === "--pin") options.pin = argv[++i] ?? "";
    else throw new Error(`unknown argument ${arg} (see the comment at the top of tools/bench.ts)`);
  }
  return options;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) throw result.error;
  return result.value;
}

function call<T>(start: (done: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value as T))));
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

/** An env measured in every row, and its agent's pid (undefined for the in-process reference). */
interface Subject {
  name: string;
  env: ExecutionEnv;
  root: string;
  connection?: Connection;
  agentPid?: number;
}

/** The same files in every candidate's directory: a 4 KiB file, 1,000 empty files, a big file to read. */
async function populate(root: string, bigBytes: number): Promise<void> {
  await writeFile(join(root, "small.txt"), "x".repeat(4096));
  await mkdir(join(root, "many"), { recursive: true });
  await Promise.all(Array.from({ length: 1000 }, (_, i) => writeFile(join(root, "many", `f${i}`), "")));
  await writeFile(join(root, "big.bin"), new Uint8Array(bigBytes).fill(7));
}

/** Builds tools/benchfloor into `dir`; undefined (and a note) when Go is not there to build it. */
function buildBenchFloor(dir: string): string | undefined {
  const out = join(dir, "benchfloor");
  try {
    execFileSync("go", ["build", "-o", out, "./tools/benchfloor"], { stdio: ["ignore", "ignore", "pipe"] });
    return out;
  } catch (error) {
    console.error(`bench: no go-cat/go-poll rows (go build ./tools/benchfloor failed: ${(error as Error).message})`);
    return undefined;
  }
}

/** The size of a hello request frame as the SDK sends it: the echo anchor moves exactly this many bytes. */
function helloRequestSize(): number {
  return encodeFrame(FrameType.request, 1, { protocol: 1, op: "hello" }).reduce((sum, piece) => sum + piece.length, 0);
}

function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;
}

/** The operation rows: every env next to the anchors that apply. */
async function benchOps(
  options: Options,
  scratch: string,
  log: (line: string) => void,
  sshSide: () => Promise<SshSide | undefined>,
): Promise<RowResult[]> {
  const quick = options.quick;
  const rounds = quick ? 2 : 7;
  const heavyRounds = quick ? 2 : 5;
  const calls = (full: number) => (quick ? Math.max(1, Math.ceil(full / 40)) : full);
  const bigBytes = (quick ? 1 : 64) * 1024 * 1024;
  const fileInfoBurst = quick ? 100 : 1000;
  const execBurst = quick ? 20 : 200;

  const cleanups: (() => Promise<unknown>)[] = [];
  const subjects: Subject[] = [];
  const dir = async (name: string) => {
    const path = join(scratch, name);
    await mkdir(path);
    await populate(path, bigBytes);
    return path;
  };
  try {
    const referenceRoot = await dir("reference");
    subjects.push({ name: "reference", env: new NodeExecutionEnv({ cwd: referenceRoot }), root: referenceRoot });
    const localRoot = await dir("local");
    const local = new LocalExecutionEnv({ cwd: localRoot });
    cleanups.push(() => local.close());
    subjects.push({ name: "local", env: local, root: localRoot, connection: local.connection });
    const pipeRoot = await dir("pipe");
    const pipeConnection = new Connection({ command: [packagedAgent()] });
    cleanups.push(() => pipeConnection.close());
    const pipe = new RemoteExecutionEnv({ connection: pipeConnection, id: "bench:pipe", cwd: pipeRoot });
    subjects.push({ name: "pipe", env: pipe, root: pipeRoot, connection: pipeConnection });

    const nodeRoot = await dir("node");
    const echoSize = helloRequestSize();
    const cat = spawn("cat", { stdio: ["pipe", "pipe", "ignore"] });
    cleanups.push(async () => cat.kill());
    const echo: Echo = echoThrough(cat.stdin, cat.stdout, echoSize);
    // The same echo through a Go process (tools/benchfloor): what the Go runtime costs a round trip before the agent
    // does any work, reading its stdin blocking as the agent does (`go-cat`) or through the network poller, as the
    // agent did until it was measured slower (`go-poll`).
    const goFloors: Candidate[] = [];
    const floor = buildBenchFloor(scratch);
    if (floor !== undefined) {
      for (const [name, args] of [
        ["go-cat", []],
        ["go-poll", ["-poller"]],
      ] as const) {
        const child = spawn(floor, [...args], { stdio: ["pipe", "pipe", "ignore"] });
        cleanups.push(async () => child.kill());
        const goEcho = echoThrough(child.stdin, child.stdout, echoSize);
        goFloors.push({ name, run: () => goEcho() });
      }
    }

    const ssh = await sshSide();
    let sftpRoot = "";
    if (ssh !== undefined) {
      for (const { name, env, root } of ssh.envs) {
        await populate(root, bigBytes);
        subjects.push({ name, env, root, connection: env.connection });
      }
      sftpRoot = await dir("sftp");
    }
    for (const subject of subjects) {
      if (subject.connection !== undefined) subject.agentPid = (await subject.connection.info()).pid;
    }
    const info = await local.connection.info();
    log(
      `Outpost agent ${info.version} on ${info.os}/${info.arch}, node ${process.version}, ${cpus().length} CPUs; ` +
        `hello request ${echoSize} bytes; ${rounds} rounds (heavy rows ${heavyRounds}), order rotated per round`,
    );

    const envCandidates = (
      op: (subject: Subject, latencies: number[]) => Promise<unknown>,
      before?: (subject: Subject) => Promise<unknown>,
    ) =>
      subjects.map(
        (subject): Candidate => ({
          name: subject.name,
          anchor: subject.name === "reference",
          run: (latencies) => op(subject, latencies),
          before: before === undefined ? undefined : () => before(subject),
          agentCpu: subject.agentPid === undefined ? undefined : () => processCpuSeconds(subject.agentPid as number),
        }),
      );
    const anchor = (name: string, run: Candidate["run"], before?: Candidate["before"]): Candidate => ({
      name,
      anchor: true,
      run,
      before,
    });
    const sftp = ssh?.sftp;
    const sftpAnchor = (
      run: (sftp: SFTPWrapper, latencies: number[]) => Promise<unknown>,
      before?: Candidate["before"],
    ) => (sftp === undefined ? [] : [anchor("sftp", (latencies) => run(sftp, latencies), before)]);
    const nodePath = (name: string) => join(nodeRoot, name);
    const sftpPath = (name: string) => join(sftpRoot, name);
    const small4k = "y".repeat(4096);
    const big = new Uint8Array(bigBytes).fill(9);
    const bigName = kib(bigBytes);

    const specs: RowSpec[] = [
      {
        name: "fileInfo",
        unit: "µs",
        rounds,
        perRound: calls(200),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.fileInfo("small.txt", context))),
          anchor("node", () => lstat(nodePath("small.txt"))),
          anchor("echo", echo),
          ...sftpAnchor((s) => call((done) => s.lstat(sftpPath("small.txt"), done))),
        ],
      },
      {
        name: "exists",
        unit: "µs",
        rounds,
        perRound: calls(200),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.exists("small.txt", context))),
          anchor("node", () => lstat(nodePath("small.txt"))),
          anchor("echo", echo),
          ...sftpAnchor((s) => call((done) => s.lstat(sftpPath("small.txt"), done))),
        ],
      },
      {
        name: "readTextFile 4 KiB",
        unit: "µs",
        rounds,
        perRound: calls(100),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.readTextFile("small.txt", context))),
          anchor("node", () => readFile(nodePath("small.txt"), "utf8")),
          anchor("echo", echo),
          ...sftpAnchor((s) => call((done) => s.readFile(sftpPath("small.txt"), "utf8", done))),
        ],
      },
      {
        name: "readBinaryFile 4 KiB",
        unit: "µs",
        rounds,
        perRound: calls(100),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.readBinaryFile("small.txt", context))),
          anchor("node", () => readFile(nodePath("small.txt"))),
          anchor("echo", echo),
          ...sftpAnchor((s) => call((done) => s.readFile(sftpPath("small.txt"), done))),
        ],
      },
      {
        name: "writeFile 4 KiB",
        unit: "µs",
        rounds,
        perRound: calls(100),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.writeFile("w.txt", small4k, context))),
          anchor("node", () => writeFile(nodePath("w.txt"), small4k)),
          anchor("echo", echo),
          ...sftpAnchor((s) => call((done) => s.writeFile(sftpPath("w.txt"), small4k, done))),
        ],
      },
      {
        name: "listDir 1,000",
        unit: "µs",
        rounds,
        perRound: calls(8),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.listDir("many", context))),
          anchor("node", () => readdir(nodePath("many"), { withFileTypes: true })),
          ...sftpAnchor((s) => call((done) => s.readdir(sftpPath("many"), done))),
        ],
      },
      {
        name: 'exec(["true"])',
        unit: "µs",
        rounds,
        perRound: calls(5),
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.exec(["true"], undefined, context))),
          anchor("node", spawnTrue),
          ...(ssh === undefined
            ? []
            : [
                anchor("ssh2-exec", ssh.execChannelTrue),
                // A fresh ssh costs ~100x an exec: one call per round keeps the row short.
                { ...anchor("ssh-true", ssh.sshTrue), perRound: 1 },
              ]),
        ],
      },
      {
        name: "hello round trip",
        unit: "µs",
        rounds,
        perRound: calls(200),
        candidates: [
          ...envCandidates(({ connection }) => (connection as Connection).request("hello", { protocol: 1 })).filter(
            (candidate) => candidate.name !== "reference",
          ),
          anchor("echo", echo),
          ...goFloors,
          ...(ssh === undefined ? [] : [anchor("ssh2-cat", ssh.ssh2Echo), anchor("ssh-cat", ssh.opensshEcho)]),
        ],
      },
      {
        name: `writeFile ${bigName}`,
        unit: "ms",
        rounds: heavyRounds,
        perRound: 1,
        bytes: bigBytes,
        // The files were just written (in the page cache) and each call is long: no warm-up call.
        warmup: false,
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.writeFile("big-out.bin", big, context))),
          anchor("node", () => writeFile(nodePath("big-out.bin"), big)),
          anchor("cat", () => catWrite(nodePath("big-cat.bin"), big, false)),
          // fastPut reads a local file (here the same bytes on the same disk) and writes it with parallel requests.
          ...sftpAnchor((s) => call((done) => s.fastPut(join(nodeRoot, "big.bin"), sftpPath("big-out.bin"), done))),
        ],
      },
      {
        name: `appendFile ${bigName}`,
        unit: "ms",
        rounds: heavyRounds,
        perRound: 1,
        bytes: bigBytes,
        // The files were just written (in the page cache) and each call is long: no warm-up call.
        warmup: false,
        // Every call appends to an empty file (truncated untimed before it), so the file does not grow run by run.
        candidates: [
          ...envCandidates(
            async ({ env }) => must(await env.appendFile("big-app.bin", big, context)),
            ({ root }) => writeFile(join(root, "big-app.bin"), ""),
          ),
          anchor(
            "node",
            () => appendFile(nodePath("big-app.bin"), big),
            () => writeFile(nodePath("big-app.bin"), ""),
          ),
          anchor(
            "cat",
            () => catWrite(nodePath("big-cat.bin"), big, true),
            () => writeFile(nodePath("big-cat.bin"), ""),
          ),
          ...sftpAnchor(
            (s) => call((done) => s.appendFile(sftpPath("big-app.bin"), Buffer.from(big.buffer), done)),
            () => writeFile(sftpPath("big-app.bin"), ""),
          ),
        ],
      },
      {
        name: `readBinaryFile ${bigName}`,
        unit: "ms",
        rounds: heavyRounds,
        perRound: 1,
        bytes: bigBytes,
        // The files were just written (in the page cache) and each call is long: no warm-up call.
        warmup: false,
        candidates: [
          ...envCandidates(async ({ env }) => must(await env.readBinaryFile("big.bin", context))),
          anchor("node", () => readFile(nodePath("big.bin"))),
          anchor("cat", () => catRead(nodePath("big.bin"), bigBytes)),
          // fastGet reads with parallel requests and writes a local file (removed untimed before each call).
          ...sftpAnchor(
            (s) => call((done) => s.fastGet(sftpPath("big.bin"), join(nodeRoot, "got.bin"), done)),
            () => rm(join(nodeRoot, "got.bin"), { force: true }),
          ),
        ],
      },
      {
        name: `${fileInfoBurst.toLocaleString("en")} concurrent fileInfo`,
        unit: "ms",
        rounds,
        perRound: 1,
        burst: true,
        candidates: [
          ...envCandidates(({ env }, latencies) =>
            burst(fileInfoBurst, async () => must(await env.fileInfo("small.txt", context)), latencies),
          ),
          anchor("node", (latencies) => burst(fileInfoBurst, () => lstat(nodePath("small.txt")), latencies)),
          ...sftpAnchor((s, latencies) =>
            burst(fileInfoBurst, () => call((done) => s.lstat(sftpPath("small.txt"), done)), latencies),
          ),
        ],
      },
      {
        name: `${execBurst} concurrent exec`,
        unit: "ms",
        rounds: heavyRounds,
        perRound: 1,
        burst: true,
        // The exec row above warmed every candidate up; a warm-up burst here would cost as much as a round.
        warmup: false,
        candidates: [
          ...envCandidates(({ env }, latencies) =>
            burst(execBurst, async () => must(await env.exec(["true"], undefined, context)), latencies),
          ),
          anchor("node", (latencies) => burst(execBurst, spawnTrue, latencies)),
        ],
      },
    ];
    const rows: RowResult[] = [];
    for (const spec of specs) {
      const started = Date.now();
      rows.push(await measureRow({ ...spec, warmup: !quick && spec.warmup !== false }));
      log(`measured ${spec.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
    if (ssh !== undefined) {
      const side = ssh;
      let opened: ExecutionEnv | undefined;
      const connectCandidate = (transport: "ssh2" | "openssh", cold: boolean): Candidate => ({
        name: transport,
        before: cold ? () => side.forgetDeployment() : undefined,
        run: async () => {
          const env = await side.connect(transport);
          opened = env;
          must(await env.fileInfo(".", context));
        },
        after: async () => {
          await (opened as RemoteExecutionEnv & { close(): Promise<void> }).close();
          opened = undefined;
        },
      });
      for (const cold of [true, false]) {
        const row = await measureRow({
          name: `first SSH connection, ${cold ? "cold (deploy)" : "warm (verify)"}`,
          unit: "ms",
          rounds: quick ? 1 : heavyRounds,
          warmup: !quick,
          perRound: 1,
          candidates: [
            connectCandidate("ssh2", cold),
            connectCandidate("openssh", cold),
            anchor("ssh-true", side.sshTrue),
          ],
        });
        rows.push(row);
        log(`measured ${row.row}`);
      }
    }
    return rows;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}

/**
 * Prints, per row and candidate of both runs, the medians and after/before, and the candidate's ratio against the
 * reference and against the row's first other anchor in each run (ratios survive a differently loaded machine).
 */
function compare(beforeFile: string, afterFile: string): void {
  const load = (file: string) => JSON.parse(readFileSync(file, "utf8")) as { rows: RowResult[] };
  const before = new Map(load(beforeFile).rows.map((row) => [row.row, row]));
  const ratio = (row: RowResult, name: string, anchor: string | undefined) => {
    const value = anchor === undefined ? undefined : row.ratios[name]?.[anchor];
    return value === undefined ? "" : `${value.toPrecision(3)}x`;
  };
  console.log(
    `${"row".padEnd(40)}${"candidate".padEnd(11)}${"before".padStart(10)}${"after".padStart(10)}${"after/before".padStart(14)}` +
      `${"÷reference before → after".padStart(28)}${"÷anchor before → after".padStart(34)}`,
  );
  for (const row of load(afterFile).rows) {
    const old = before.get(row.row);
    if (old === undefined) continue;
    const anchor = row.anchors.find((name) => name !== "reference");
    for (const [name, measure] of Object.entries(row.results)) {
      const was = old.results[name];
      if (was === undefined) continue;
      const versusReference =
        ratio(row, name, "reference") && `${ratio(old, name, "reference")} → ${ratio(row, name, "reference")}`;
      const versusAnchor =
        ratio(row, name, anchor) && `${anchor}: ${ratio(old, name, anchor)} → ${ratio(row, name, anchor)}`;
      console.log(
        `${`${row.row} [${row.unit}]`.padEnd(40)}${name.padEnd(11)}${was.median.toPrecision(4).padStart(10)}` +
          `${measure.median.toPrecision(4).padStart(10)}${`${(measure.median / was.median).toFixed(2)}x`.padStart(14)}` +
          `${versusReference.padStart(28)}${versusAnchor.padStart(34)}`,
      );
    }
  }
}

function gitCommit(): string | undefined {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/** Set in the pinned run, to the CPU it runs on. */
const PINNED_ENV = "OUTPOST_BENCH_PINNED";

/**
 * Runs this bench again under `taskset -c <cpu>`, so that it and every process it starts share one CPU, and exits
 * with its status. Why: on an idle VM a round trip costs its work plus, by chance, the wake-up of a halted vCPU on
 * the other side (50–100 µs); which of the two a row's rounds get flips from run to run, for `cat` as much as for
 * the agent, so unpinned ratios of short calls swing 2–4×. On one CPU a round trip is the work of every process
 * on its path plus context switches, which repeats from run to run: the ratio of two candidates is then the ratio
 * of what they cost, not of how their wake-ups fell. Bulk and burst rows lose their parallelism there, so read
 * those from an unpinned run.
 */
function pinToCpu(cpu: string, argv: string[]): never {
  if (!/^\d+$/.test(cpu)) throw new Error(`--pin needs a CPU number, not ${JSON.stringify(cpu)}`);
  const script = process.argv[1];
  const run = spawnSync("taskset", ["-c", cpu, process.execPath, ...process.execArgv, script, ...argv], {
    stdio: "inherit",
    env: { ...process.env, [PINNED_ENV]: cpu },
  });
  if (run.error !== undefined) throw new Error(`--pin: taskset failed to start (util-linux): ${run.error.message}`);
  process.exit(run.status ?? 1);
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === "--compare") {
    compare(argv[1], argv[2]);
    return;
  }
  const options = parseOptions(argv);
  if (options.pin !== undefined && process.env[PINNED_ENV] !== options.pin) pinToCpu(options.pin, argv);
  // With `--json -` stdout carries only the JSON document.
  const log = (line: string) => (options.json === "-" ? process.stderr : process.stdout).write(`${line}\n`);
  if (options.quick) log("--quick: a smoke run (2 rounds, small sizes); do not compare its numbers");
  if (options.pin !== undefined) log(`--pin ${options.pin}: every process of this run shares CPU ${options.pin}`);
  const started = Date.now();
  const rows: RowResult[] = [];
  const scratch = await mkdtemp(join(tmpdir(), "outpost-bench-"));
  // One loopback sshd and its connections for the whole run, started by the first section that asks for it.
  let ssh: Promise<SshSide | undefined> | undefined;
  const sshSide = () => {
    ssh ??= (async () => {
      const noSsh = options.noSsh ? "--no-ssh" : sshUnavailable();
      if (noSsh !== undefined) {
        log(`SSH candidates and anchors left out: ${noSsh}`);
        return undefined;
      }
      return startSshSide(await subdir(scratch, "ssh"), helloRequestSize());
    })();
    return ssh;
  };
  try {
    const sections: [string, (dir: string) => Promise<RowResult[]>][] = [
      ["ops", (dir) => benchOps(options, dir, log, sshSide)],
      ["list-files", (dir) => benchListFiles(dir, options.quick, log)],
      ["search-files", (dir) => benchSearchFiles(dir, options.quick, log, sshSide)],
      ["pi-grep", (dir) => benchPiGrep(dir, options.quick, log)],
      ["watch", (dir) => benchWatch(dir, options.quick, log)],
    ];
    for (const [name, bench] of sections) {
      if (!options.sections.has(name)) continue;
      const sectionStart = Date.now();
      rows.push(...(await bench(await subdir(scratch, name))));
      log(`section ${name}: ${((Date.now() - sectionStart) / 1000).toFixed(0)} s`);
    }
  } finally {
    await (await ssh?.catch(() => undefined))?.close();
    await rm(scratch, { recursive: true, force: true });
  }
  log("");
  log(formatTable(rows));
  log(
    `\n${rows.length} rows in ${((Date.now() - started) / 1000).toFixed(0)} s; median of round medians, spread = min–max of round medians; ÷x = median / anchor x's median (> 1: slower)`,
  );
  if (options.json !== undefined) {
    const document = {
      meta: {
        date: new Date().toISOString(),
        commit: gitCommit(),
        node: process.version,
        cpus: cpus().length,
        pinnedToCpu: options.pin,
        quick: options.quick,
      },
      rows,
    };
    const text = `${JSON.stringify(document, null, 1)}\n`;
    if (options.json === "-") process.stdout.write(text);
    else {
      await writeFile(options.json, text);
      log(`JSON: ${options.json}`);
    }
  }
}

async function subdir(scratch: string, name: string): Promise<string> {
  const path = join(scratch, name);
  await mkdir(path);
  return path;
}

await main(process.argv.slice(2));
