// `make bench` (search part): `searchFiles` through LocalExecutionEnv next to the tools an agent would otherwise run
// — `rg` (the anchor, the same rules: `--hidden --no-require-git --glob '!.git'`), `git grep --untracked` and GNU `grep -r` — on the
// tree of the listFiles rows (tools/bench-list-files.ts: BENCH_FILES files, default 100,000, 2,000 with --quick)
// filled with code-like text, in interleaved rounds (tools/bench-harness.ts), with the matching lines each found.
//
// Four searches: a literal that matches rarely (one file in 5,000), a literal that matches often (about one line
// in six), a case-insensitive regex with alternation, and a regex with no literal. Counts differ where the tools'
// rules differ: `grep -r` honours no .gitignore and searches .git; `git grep` skips what git ignores, as rg and
// searchFiles do.
import { performance } from "node:perf_hooks";
import { LocalExecutionEnv } from "../sdk/src/index.js";
import { type Candidate, measureRow, type RowResult } from "./bench-harness.js";
import { counted, countLines, makeTree, which } from "./bench-list-files.js";

const context = { abortSignal: undefined };
const WORDS = [
  "const",
  "return",
  "function",
  "import",
  "export",
  "interface",
  "value",
  "result",
  "error",
  "options",
  "path",
  "line",
  "match",
  "index",
  "string",
  "number",
  "await",
  "async",
  "context",
  "TODO",
];

/** A file's text (exported for a look at the tree by hand): 20–40 lines of words, numbers in some, the rare needle in one file of 5,000. */
export function content(index: number): string {
  // A 32-bit linear congruential generator: the same text on every run.
  let seed = Math.imul(index + 1, 2654435761) >>> 0;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const lines: string[] = [];
  const count = 20 + next(21);
  for (let l = 0; l < count; l++) {
    const words = Array.from({ length: 3 + next(7) }, () => WORDS[next(WORDS.length)]);
    if (next(10) === 0) words.push(`${100 + next(900)}-${1000 + next(9000)}`);
    lines.push(`${"  ".repeat(next(4))}${words.join(" ")};`);
  }
  if (index % 5000 === 7) lines.splice(3, 0, "  // RARE_NEEDLE_4711 is here");
  return `${lines.join("\n")}\n`;
}

interface Search {
  name: string;
  pattern: string;
  ignoreCase: boolean;
}

const SEARCHES: Search[] = [
  { name: "rare literal", pattern: "RARE_NEEDLE_4711", ignoreCase: false },
  { name: "frequent literal", pattern: "context", ignoreCase: false },
  { name: "-i alternation", pattern: "todo|fixme|interface", ignoreCase: true },
  { name: "regex, no literal", pattern: "[0-9]{3}-[0-9]{4}", ignoreCase: false },
];

/** The search rows; `root` is an empty scratch directory. BENCH_FILES and BENCH_ROUNDS override the sizes. */
export async function benchSearchFiles(
  root: string,
  quick: boolean,
  log: (line: string) => void,
): Promise<RowResult[]> {
  const files = Number(process.env.BENCH_FILES ?? (quick ? 2_000 : 100_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5));
  const env = new LocalExecutionEnv({ cwd: root });
  try {
    const started = performance.now();
    await makeTree(root, files, content);
    log(
      `searchFiles: ${files.toLocaleString("en")} files (made in ${((performance.now() - started) / 1000).toFixed(1)} s), ${rounds} rounds`,
    );
    await env.connection.info();
    const rg = await which("rg");
    const git = await which("git");
    const grep = await which("grep");
    const missing = [!rg && "rg (ripgrep)", !git && "git", !grep && "grep"].filter(Boolean);
    if (missing.length > 0) log(`searchFiles: not installed, left out: ${missing.join(", ")}`);
    const rows: RowResult[] = [];
    for (const search of SEARCHES) {
      const counts = new Map<string, number>();
      const i = search.ignoreCase ? ["-i"] : [];
      const candidates: Candidate[] = [
        counted(
          "local",
          async () => {
            let count = 0;
            const result = await env.searchFiles(
              "",
              search.pattern,
              { ignoreCase: search.ignoreCase, onPage: (matches) => (count += matches.length) },
              context,
            );
            if (!result.ok) throw result.error;
            return count;
          },
          counts,
        ),
      ];
      if (rg) {
        // `--glob !.git`: with --hidden ripgrep searches .git, which searchFiles never does (LF7).
        const args = [
          "--no-config",
          "--hidden",
          "--no-require-git",
          "--glob",
          "!.git",
          "-n",
          ...i,
          "-e",
          search.pattern,
        ];
        candidates.push(counted("rg", () => countLines(rg, args, root), counts, true));
      }
      if (git) {
        const args = ["grep", "--untracked", "-n", "-I", "-E", ...i, "-e", search.pattern];
        candidates.push(counted("git-grep", () => countLines(git, args, root), counts));
      }
      if (grep) {
        const args = ["-r", "-n", "-I", "-E", ...i, "-e", search.pattern, "."];
        candidates.push(counted("grep-r", () => countLines(grep, args, root), counts));
      }
      rows.push(
        await measureRow({
          name: `searchFiles ${files.toLocaleString("en")} files: ${search.name}`,
          unit: "ms",
          rounds,
          perRound: 1,
          candidates,
        }),
      );
      log(`searchFiles ${search.name}: lines found: ${[...counts].map(([name, n]) => `${name} ${n}`).join(", ")}`);
    }
    return rows;
  } finally {
    await env.close();
  }
}
