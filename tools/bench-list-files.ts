// `make bench` (listing part) and `make bench-large`: `listFiles` through LocalExecutionEnv next to the tools an
// agent would otherwise run — `rg --files`, `fd --type f --hidden`, `git ls-files -co --exclude-standard` — and
// Node's `fs.promises.readdir(root, {recursive: true})`, on one generated tree, in interleaved rounds, reporting
// medians with their spread, the count each produced, and ratios against `rg --files` from the same run.
//
// The tree: BENCH_FILES files (default 100,000; `make bench-large` uses 1,000,000) in directories of 20 files,
// three levels deep, in a fresh git repository with nothing committed, with a `.gitignore` at the root, in every
// top-level directory and in every tenth second-level one, so the ignore rules are nested and really prune
// (`build/` and `node_modules/` directories, `*.log`, `*.tmp` but `!keep.tmp`, `generated-*`). Counts differ where
// the tools' rules differ: `rg --files` leaves out hidden files (the `.gitignore`s), `fd --hidden` lists the
// contents of `.git`, `fs.readdir` lists everything including directories; `listFiles`, `rg --files --hidden
// --glob '!.git'` and `git ls-files -co --exclude-standard` should agree.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LocalExecutionEnv } from "@outpost/sdk";

const context = { abortSignal: undefined };
const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (FILES > 200_000 ? 3 : 7));
const PER_DIR = 20;

/** Where a program lives, or undefined: Debian names fd `fdfind`. */
async function which(...names: string[]): Promise<string | undefined> {
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
function countLines(program: string, args: string[], cwd: string): Promise<number> {
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

/** Writes the tree; returns the number of directories. */
async function makeTree(root: string): Promise<number> {
  const dirs = Math.ceil(FILES / PER_DIR);
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
        for (let f = 0; f < PER_DIR && written < FILES; f++, written++) {
          const ext = f % 10 === 0 ? "log" : f % 10 === 1 ? "tmp" : f % 10 === 2 ? "js" : "ts";
          const name = f === 1 && c % 5 === 0 ? "keep.tmp" : f === 3 ? `generated-${f}.ts` : `file${f}.${ext}`;
          pending.push(writeFile(join(leaf, name), ""));
          if (pending.length >= 256) await Promise.all(pending.splice(0));
        }
      }
    }
  }
  await Promise.all(pending);
  return made;
}

interface Candidate {
  name: string;
  run: () => Promise<number>;
  samples: number[];
  count?: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Time from the abort to the settled (aborted) result of a whole-tree listing cancelled 20 ms after it started. */
async function abortLatency(env: LocalExecutionEnv): Promise<number[]> {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
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
  return samples.length > 0 ? samples : [Number.NaN];
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "outpost-bench-listfiles-"));
  const env = new LocalExecutionEnv({ cwd: root });
  try {
    const started = performance.now();
    const dirs = await makeTree(root);
    console.log(
      `listFiles bench: ${FILES.toLocaleString("en")} files in ${dirs.toLocaleString("en")} leaf directories ` +
        `(made in ${((performance.now() - started) / 1000).toFixed(1)} s), ${ROUNDS} interleaved rounds`,
    );
    await env.connection.info();
    const rg = await which("rg");
    const fd = await which("fd", "fdfind");
    const git = await which("git");
    const candidates: Candidate[] = [
      {
        name: "listFiles (LocalExecutionEnv)",
        run: async () => {
          const result = await env.listFiles("", undefined, context);
          if (!result.ok) throw result.error;
          return result.value.paths.length;
        },
        samples: [],
      },
    ];
    if (rg) candidates.push({ name: "rg --files", run: () => countLines(rg, ["--files"], root), samples: [] });
    if (rg) {
      candidates.push({
        name: "rg --files --hidden",
        run: () => countLines(rg, ["--files", "--hidden", "--glob", "!.git"], root),
        samples: [],
      });
    }
    if (fd) {
      candidates.push({
        name: "fd --type f --hidden",
        run: () => countLines(fd, ["--type", "f", "--hidden"], root),
        samples: [],
      });
    }
    if (git) {
      candidates.push({
        name: "git ls-files -co --exclude-standard",
        run: () => countLines(git, ["ls-files", "-co", "--exclude-standard"], root),
        samples: [],
      });
    }
    candidates.push({
      name: "fs.readdir({recursive: true})",
      run: async () => (await readdir(root, { recursive: true })).length,
      samples: [],
    });
    const missing = [!rg && "rg (ripgrep)", !fd && "fd (fd-find)", !git && "git"].filter(Boolean);
    if (missing.length > 0) console.log(`not installed, left out: ${missing.join(", ")}`);

    // One warm-up round (page cache, agent start), then interleaved rounds.
    for (const candidate of candidates) candidate.count = await candidate.run();
    for (let round = 0; round < ROUNDS; round++) {
      for (const candidate of candidates) {
        const start = performance.now();
        const count = await candidate.run();
        candidate.samples.push(performance.now() - start);
        if (count !== candidate.count) throw new Error(`${candidate.name}: ${count} paths, earlier ${candidate.count}`);
      }
    }
    const anchor = candidates.find((candidate) => candidate.name === "rg --files");
    console.log("");
    console.log(
      `${"candidate".padEnd(38)}${"median ms".padStart(11)}${"min–max ms".padStart(18)}${"paths".padStart(11)}  vs rg --files`,
    );
    for (const candidate of candidates) {
      const m = median(candidate.samples);
      const spread = `${Math.min(...candidate.samples).toFixed(0)}–${Math.max(...candidate.samples).toFixed(0)}`;
      const ratio = anchor ? `${(m / median(anchor.samples)).toFixed(2)}x` : "—";
      console.log(
        `${candidate.name.padEnd(38)}${m.toFixed(1).padStart(11)}${spread.padStart(18)}${(candidate.count ?? 0).toLocaleString("en").padStart(11)}  ${ratio}`,
      );
    }
    console.log("");
    const abortMs = await abortLatency(env);
    console.log(
      `abort: a listing cancelled 20 ms in settles ${median(abortMs).toFixed(1)} ms after the abort ` +
        `(median of ${abortMs.length}, ${Math.min(...abortMs).toFixed(1)}–${Math.max(...abortMs).toFixed(1)} ms)`,
    );
  } finally {
    await env.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
