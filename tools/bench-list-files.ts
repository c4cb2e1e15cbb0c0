// `make bench` (listing part) and `make bench-large`: `listFiles` through LocalExecutionEnv next to the tools an
// agent would otherwise run — `rg --files` (`rg`, the anchor), `rg --files --hidden --glob '!.git'` (`rg-hidden`),
// `fd --type f --hidden` (`fd`), `git ls-files -co --exclude-standard` (`git`) — and Node's
// `fs.promises.readdir(root, {recursive: true})` (`node`), on one generated tree, in interleaved rounds
// (tools/bench-harness.ts), with the count each produced.
//
// The tree: BENCH_FILES files (default 100,000, 2,000 with --quick; `make bench-large` uses 1,000,000) in
// directories of 20 files, three levels deep, in a fresh git repository with nothing committed, with a `.gitignore`
// at the root, in every top-level directory and in every tenth second-level one, so the ignore rules are nested and
// really prune (`build/` and `node_modules/` directories, `*.log`, `*.tmp` but `!keep.tmp`, `generated-*`). Counts differ where
// the tools' rules differ: `rg --files` leaves out hidden files (the `.gitignore`s), `fd --hidden` lists the
// contents of `.git`, `fs.readdir` lists everything including directories; `listFiles`, `rg --files --hidden
// --glob '!.git'` and `git ls-files -co --exclude-standard` should agree.
import { spawn } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LocalExecutionEnv } from "../sdk/src/index.js";
import { type Candidate, measureRow, type RowResult, summarize } from "./bench-harness.js";

const context = { abortSignal: undefined };
const PER_DIR = 20;

/** Where a program lives, or undefined: Debian names fd `fdfind`. */
export async function which(...names: string[]): Promise<string | undefined> {
  for (const name of names) {
    const found = await output("sh", ["-c", `command -v ${name}`], "/");
    if (found.code === 0 && found.text.trim() !== "") return found.text.trim();
  }
  return undefined;
}

async function output(program: string, args: string[], cwd: string): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (text += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, text }));
  });
}

/** Runs a program and counts the lines it prints (without keeping them). */
export function countLines(program: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, stdio: ["ignore", "pipe", "inherit"] });
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(lines) : reject(new Error(`${program} exited with ${code}`))));
  });
}

/**
 * Writes the tree; returns the number of directories. `content` gives each file's text from its index (default
 * empty: the listing rows need names only; the search rows, tools/bench-search-files.ts, fill the same tree).
 */
export async function makeTree(
  root: string,
  files: number,
  content: (index: number) => string = () => "",
): Promise<number> {
  const dirs = Math.ceil(files / PER_DIR);
  const fanout = Math.max(2, Math.ceil(Math.cbrt(dirs)));
  await output("git", ["init", "-q", root], "/");
  await writeFile(join(root, ".gitignore"), "*.log\nnode_modules/\n/dist\n");
  let made = 0;
  let written = 0;
  const pending: Promise<void>[] = [];
  for (let a = 0; a < fanout && made < dirs; a++) {
    const top = join(root, `pkg${a}`);
    await mkdir(top);
    await writeFile(join(top, ".gitignore"), "*.tmp\n!keep.tmp\nbuild/\n");
    for (let b = 0; b < fanout && made < dirs; b++) {
      const mid = join(top, b === 3 ? "build" : b === 5 ? "node_modules" : `mod${b}`);
      await mkdir(mid, { recursive: true });
      if (b % 10 === 0) await writeFile(join(mid, ".gitignore"), "generated-*\n");
      for (let c = 0; c < fanout && made < dirs; c++, made++) {
        const leaf = join(mid, `dir${c}`);
        await mkdir(leaf);
        for (let f = 0; f < PER_DIR && written < files; f++, written++) {
          const ext = f % 10 === 0 ? "log" : f % 10 === 1 ? "tmp" : f % 10 === 2 ? "js" : "ts";
          const name = f === 1 && c % 5 === 0 ? "keep.tmp" : f === 3 ? `generated-${f}.ts` : `file${f}.${ext}`;
          pending.push(writeFile(join(leaf, name), content(written)));
          if (pending.length >= 256) await Promise.all(pending.splice(0));
        }
      }
    }
  }
  await Promise.all(pending);
  return made;
}

/** A candidate that fails if a later call lists a different number of paths than its first call. */
export function counted(
  name: string,
  list: () => Promise<number>,
  counts: Map<string, number>,
  anchor = false,
): Candidate {
  return {
    name,
    anchor,
    run: async () => {
      const count = await list();
      const first = counts.get(name);
      if (first === undefined) counts.set(name, count);
      else if (count !== first) throw new Error(`${name}: ${count} paths, earlier ${first}`);
    },
  };
}

/** Time (ms) from the abort to the settled (aborted) result of a whole-tree listing cancelled 20 ms after it started. */
async function abortLatency(env: LocalExecutionEnv, rounds: number): Promise<number[]> {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const controller = new AbortController();
    let abortedAt = 0;
    const timer = setTimeout(() => {
      abortedAt = performance.now();
      controller.abort();
    }, 20);
    const result = await env.listFiles("", undefined, { abortSignal: controller.signal });
    clearTimeout(timer);
    if (abortedAt === 0) continue; // finished before the abort: nothing to measure
    if (result.ok || result.error.code !== "aborted") throw new Error("the aborted listing did not fail aborted");
    samples.push(performance.now() - abortedAt);
  }
  return samples;
}

/** The listing rows; `root` is an empty scratch directory. BENCH_FILES and BENCH_ROUNDS override the sizes. */
export async function benchListFiles(root: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  const files = Number(process.env.BENCH_FILES ?? (quick ? 2_000 : 100_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5));
  const env = new LocalExecutionEnv({ cwd: root });
  try {
    const started = performance.now();
    const dirs = await makeTree(root, files);
    log(
      `listFiles: ${files.toLocaleString("en")} files in ${dirs.toLocaleString("en")} leaf directories ` +
        `(made in ${((performance.now() - started) / 1000).toFixed(1)} s), ${rounds} rounds`,
    );
    await env.connection.info();
    const rg = await which("rg");
    const fd = await which("fd", "fdfind");
    const git = await which("git");
    const counts = new Map<string, number>();
    const candidates: Candidate[] = [
      counted(
        "local",
        async () => {
          const result = await env.listFiles("", undefined, context);
          if (!result.ok) throw result.error;
          return result.value.paths.length;
        },
        counts,
      ),
    ];
    if (rg) candidates.push(counted("rg", () => countLines(rg, ["--files"], root), counts, true));
    if (rg) {
      candidates.push(
        counted("rg-hidden", () => countLines(rg, ["--files", "--hidden", "--glob", "!.git"], root), counts),
      );
    }
    if (fd) candidates.push(counted("fd", () => countLines(fd, ["--type", "f", "--hidden"], root), counts));
    if (git) {
      candidates.push(counted("git", () => countLines(git, ["ls-files", "-co", "--exclude-standard"], root), counts));
    }
    candidates.push(counted("node", async () => (await readdir(root, { recursive: true })).length, counts, true));
    const missing = [!rg && "rg (ripgrep)", !fd && "fd (fd-find)", !git && "git"].filter(Boolean);
    if (missing.length > 0) log(`listFiles: not installed, left out: ${missing.join(", ")}`);
    const row = await measureRow({
      name: `listFiles ${files.toLocaleString("en")} files`,
      unit: "ms",
      rounds,
      perRound: 1,
      candidates,
    });
    log(`listFiles: paths listed: ${[...counts].map(([name, count]) => `${name} ${count}`).join(", ")}`);
    const abortMs = await abortLatency(env, rounds);
    const rows = [row];
    if (abortMs.length > 0) {
      rows.push({
        row: `listFiles ${files.toLocaleString("en")} files, abort 20 ms in → settled`,
        unit: "ms",
        rounds: abortMs.length,
        perRound: 1,
        spread: "min-max of round medians",
        results: { local: summarize(abortMs) },
        anchors: [],
        ratios: {},
        failed: {},
      });
    }
    return rows;
  } finally {
    await env.close();
  }
}
