// `make bench` (search part, `--only search`): `searchFiles` through LocalExecutionEnv (`local`) next to what an
// agent would otherwise run on the target — `rg` (the anchor, with the same flags), `git grep --untracked` (`git`)
// and GNU `grep -r` (`grep`) — on the tree of the listFiles rows (tools/bench-list-files.ts: BENCH_FILES files,
// default 100,000, in a fresh git repository with nested `.gitignore`s) filled with a few lines of code per file,
// for four patterns: a literal that matches rarely, a literal that matches often, a case-insensitive regex with
// alternation, and a regex with no literal in it. Interleaved rounds (tools/bench-harness.ts); every candidate prints
// or pages one entry per matching line, and the counts are logged so a reader sees they agree: `local`, `rg` and
// `git` honour the `.gitignore`s and skip dot-files; `grep -r` cannot read `.gitignore` and also searches the
// ignored files, so its count is higher by what they hold.
//
// Then pi's grep tool (`@outpost/pi-coding-agent`) on a smaller tree (BENCH_PI_FILES, default 5,000) with each of its
// three backends forced: the agent's `searchFiles`, `rg --json` run on the target through `exec` (the anchor: the
// issue's goal is the first within 1.5× of it), and the old search through the env (listing, then every file read
// line by line), beside pi's own local grep (`pi`, ripgrep started by pi in process).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { LocalExecutionEnv } from "../sdk/src/index.js";
import { type Candidate, measureRow, type RowResult } from "./bench-harness.js";
import { countLines, makeTree, which } from "./bench-list-files.js";

const context = { abortSignal: undefined };

/** The n-th file's text: ~10 lines of TypeScript-like code; words chosen so each pattern below matches as it says. */
export function fileText(n: number): string {
  const lines = [
    `// file ${n}: generated for the search bench`,
    `import { helper${n % 50} } from "./helper${n % 50}";`,
    `export function compute${n}(value: number): number {`,
    `  const scaled = value * ${n % 97};`,
    `  if (scaled > ${n % 1000}) {`,
    `    return scaled - ${n % 13};`,
    "  }",
  ];
  if (n % 7 === 0) lines.push("  // TODO: handle the overflow case");
  if (n % 11 === 0) lines.push("  // FixMe: the bound is a guess");
  if (n % 997 === 5) lines.push(`  // measured in Zanzibar, run ${n}`);
  lines.push(`  return helper${n % 50}(scaled);`, "}", `export const Label${n % 100}Value = "item ${n % 1000}";`);
  return `${lines.join("\n")}\n`;
}

/** One pattern of the rows, and how each tool is told it. */
interface Pattern {
  label: string;
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
}

const PATTERNS: Pattern[] = [
  { label: "rare literal", pattern: "Zanzibar", literal: true, ignoreCase: false },
  { label: "frequent literal", pattern: "return", literal: true, ignoreCase: false },
  { label: "-i alternation", pattern: "todo|fixme", literal: false, ignoreCase: true },
  { label: "regex, no literal", pattern: "[A-Z][a-z]+[0-9]{2}[A-Z]", literal: false, ignoreCase: false },
];

/** The flags of grep-like tools for a pattern: `-F`, or `regexFlag` (git's and GNU grep's `-E`) for a regex; `-i`. */
function grepFlags(p: Pattern, regexFlag?: string): string[] {
  const kind = p.literal ? ["-F"] : regexFlag === undefined ? [] : [regexFlag];
  return [...kind, ...(p.ignoreCase ? ["-i"] : []), "-e", p.pattern];
}

/** A candidate that fails if a later call finds a different number of matching lines than its first call. */
function counted(name: string, search: () => Promise<number>, counts: Map<string, number>, anchor = false) {
  return {
    name,
    anchor,
    run: async () => {
      const count = await search();
      const first = counts.get(name);
      if (first === undefined) counts.set(name, count);
      else if (count !== first) throw new Error(`${name}: ${count} matching lines, earlier ${first}`);
    },
  } satisfies Candidate;
}

/** The searchFiles rows and the pi grep rows; `root` is an empty scratch directory. */
export async function benchSearch(root: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  const rows = await benchSearchTree(join(root, "tree"), quick, log);
  rows.push(...(await benchPiGrep(join(root, "pi"), quick, log)));
  return rows;
}

async function benchSearchTree(root: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  const files = Number(process.env.BENCH_FILES ?? (quick ? 2_000 : 100_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5));
  mkdirSync(root);
  const started = performance.now();
  const dirs = await makeTree(root, files, fileText);
  log(
    `search: ${files.toLocaleString("en")} files in ${dirs.toLocaleString("en")} leaf directories ` +
      `(made in ${((performance.now() - started) / 1000).toFixed(1)} s), ${rounds} rounds`,
  );
  const env = new LocalExecutionEnv({ cwd: root });
  const rows: RowResult[] = [];
  try {
    await env.connection.info();
    const rg = await which("rg");
    const git = await which("git");
    const grep = await which("grep");
    const missing = [!rg && "rg (ripgrep)", !git && "git", !grep && "grep"].filter(Boolean);
    if (missing.length > 0) log(`search: not installed, left out: ${missing.join(", ")}`);
    for (const p of PATTERNS) {
      const counts = new Map<string, number>();
      const candidates: Candidate[] = [
        counted(
          "local",
          async () => {
            let count = 0;
            const result = await env.searchFiles(
              "",
              p.pattern,
              { literal: p.literal, ignoreCase: p.ignoreCase, hidden: false, onPage: (page) => (count += page.length) },
              context,
            );
            if (!result.ok) throw result.error;
            return count;
          },
          counts,
        ),
      ];
      // rg's defaults are searchFiles' with hidden: false (dot-files skipped, .gitignore honoured in a repository).
      if (rg) candidates.push(counted("rg", () => countLines(rg, ["-n", ...grepFlags(p)], root), counts, true));
      if (git) {
        candidates.push(
          counted(
            "git",
            () => countLines(git, ["grep", "-n", "-I", "--untracked", ...grepFlags(p, "-E")], root),
            counts,
          ),
        );
      }
      if (grep) {
        candidates.push(
          counted(
            "grep",
            () => countLines(grep, ["-rn", "-I", "--exclude-dir=.git", ...grepFlags(p, "-E")], root),
            counts,
          ),
        );
      }
      const row = await measureRow({
        name: `searchFiles ${files.toLocaleString("en")} files, ${p.label} ${JSON.stringify(p.pattern)}${p.ignoreCase ? " -i" : ""}`,
        unit: "ms",
        rounds,
        perRound: 1,
        candidates,
      });
      log(`search ${p.label}: matching lines: ${[...counts].map(([name, count]) => `${name} ${count}`).join(", ")}`);
      rows.push(row);
    }
  } finally {
    await env.close();
  }
  return rows;
}

/** pi's grep tool with each backend on a tree of BENCH_PI_FILES files, beside pi's own local grep. */
async function benchPiGrep(root: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  const files = Number(process.env.BENCH_PI_FILES ?? (quick ? 500 : 5_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5));
  mkdirSync(root);
  await makeTree(root, files, fileText);
  // pi reads its agent directory when it loads: a private one, and no downloads (as the integration's tests do).
  const agentDir = mkdtempSync(join(tmpdir(), "outpost-bench-pi-"));
  process.env.PI_OFFLINE = "1";
  process.env.PI_CODING_AGENT_DIR = agentDir;
  const { createGrepToolDefinition } = await import("@mariozechner/pi-coding-agent");
  const { createOutpostGrepToolDefinition } = await import("../integrations/pi-coding-agent/src/index.js");
  const env = new LocalExecutionEnv({ cwd: root });
  const rows: RowResult[] = [];
  try {
    await env.connection.info();
    type Tool = { execute: (...args: never[]) => Promise<{ content: { type: string; text?: string }[] }> };
    const tools: [string, Tool, boolean][] = [
      ["searchFiles", createOutpostGrepToolDefinition(env, root, { backend: "searchFiles" }) as unknown as Tool, false],
      ["rg", createOutpostGrepToolDefinition(env, root, { backend: "ripgrep" }) as unknown as Tool, true],
      ["env", createOutpostGrepToolDefinition(env, root, { backend: "env" }) as unknown as Tool, false],
      ["pi", createGrepToolDefinition(root) as unknown as Tool, true],
    ];
    for (const [label, pattern] of [
      ["rare literal", "Zanzibar"],
      ["frequent literal, stops at pi's 100 matches", "return"],
    ]) {
      const counts = new Map<string, number>();
      const candidates = tools.map(([name, tool, anchor]) =>
        counted(
          name,
          async () => {
            const execute = tool.execute as unknown as (
              id: string,
              params: { pattern: string; literal: boolean },
            ) => Promise<{ content: { type: string; text?: string }[] }>;
            const result = await execute("bench", { pattern, literal: true });
            const text = result.content[0]?.text ?? "";
            // The rows shown to the model (notices after a blank line left out).
            return text
              .split("\n\n")[0]
              .split("\n")
              .filter((line) => /^\S+:\d+: /.test(line)).length;
          },
          counts,
          anchor,
        ),
      );
      rows.push(
        await measureRow({
          name: `pi grep ${files.toLocaleString("en")} files, ${label} ${JSON.stringify(pattern)}`,
          unit: "ms",
          rounds,
          perRound: 1,
          candidates,
        }),
      );
      log(`pi grep ${label}: rows: ${[...counts].map(([name, count]) => `${name} ${count}`).join(", ")}`);
    }
  } finally {
    await env.close();
    rmSync(agentDir, { recursive: true, force: true });
  }
  return rows;
}
