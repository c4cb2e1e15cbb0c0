// `make bench` (search part): `searchFiles` through LocalExecutionEnv next to the tools an agent would otherwise run
// — `rg` (the anchor, the same rules: `--hidden --no-require-git --glob '!.git'`), `git grep --untracked` and GNU `grep -r` — on the
// tree of the listFiles rows (tools/bench-list-files.ts: BENCH_FILES files, default 100,000, 2,000 with --quick)
// filled with code-like text, in interleaved rounds (tools/bench-harness.ts), with the matching lines each found.
//
// Four searches: a literal that matches rarely (one file in 5,000), a literal that matches often (about one line
// in six), a case-insensitive regex with alternation, and a regex with no literal. Counts differ where the tools'
// rules differ: `grep -r` honours no .gitignore and searches .git; `git grep` skips what git ignores, as rg and
// searchFiles do.
//
// Over SSH (left out with --no-ssh or without sshd), the same four searches of the same tree in rows of their own:
// `searchFiles` with the tree's absolute path through the connected envs of the run's loopback sshd
// (tools/bench-ssh.ts: `ssh2` and `openssh`, the agent on the far side searching) against `ssh host rg <the flags
// above> <tree>` (`ssh-rg`, the anchor: a fresh ssh per search, what an agent without Outpost runs) and the same rg
// on an exec channel of an open ssh2 connection (`ssh2-exec-rg`: rg without the connection set-up).
import { performance } from "node:perf_hooks";
import { LocalExecutionEnv } from "../sdk/src/index.js";
import { type Candidate, measureRow, type RowResult } from "./bench-harness.js";
import { counted, countLines, makeTree, which } from "./bench-list-files.js";
import type { SshSide } from "./bench-ssh.js";

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

/** rg's arguments for a search, the same rules as searchFiles (paths, if any, follow). */
function rgArgs(search: Search): string[] {
  // `--glob !.git`: with --hidden ripgrep searches .git, which searchFiles never does (LF7).
  const i = search.ignoreCase ? ["-i"] : [];
  return ["--no-config", "--hidden", "--no-require-git", "--glob", "!.git", "-n", ...i, "-e", search.pattern];
}

/** A word for a POSIX shell (the remote side of `ssh host <command>` is one). */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** searchFiles through an env, counting the matches page by page (without keeping them). */
async function searchCount(env: Pick<LocalExecutionEnv, "searchFiles">, path: string, search: Search): Promise<number> {
  let count = 0;
  const result = await env.searchFiles(
    path,
    search.pattern,
    { ignoreCase: search.ignoreCase, onPage: (matches) => (count += matches.length) },
    context,
  );
  if (!result.ok) throw result.error;
  return count;
}

/**
 * The search rows; `root` is an empty scratch directory, `sshSide` the run's SSH side (undefined: no SSH rows).
 * BENCH_FILES and BENCH_ROUNDS override the sizes.
 */
export async function benchSearchFiles(
  root: string,
  quick: boolean,
  log: (line: string) => void,
  sshSide: () => Promise<SshSide | undefined> = async () => undefined,
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
      const candidates: Candidate[] = [counted("local", () => searchCount(env, "", search), counts)];
      if (rg) candidates.push(counted("rg", () => countLines(rg, rgArgs(search), root), counts, true));
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
    const ssh = await sshSide();
    if (ssh !== undefined) rows.push(...(await overSsh(ssh, root, files, rounds, rg !== undefined, log)));
    return rows;
  } finally {
    await env.close();
  }
}

/** The rows over SSH: the agent's searchFiles on the far side of each transport against rg run through ssh. */
async function overSsh(
  ssh: SshSide,
  root: string,
  files: number,
  rounds: number,
  withRg: boolean,
  log: (line: string) => void,
): Promise<RowResult[]> {
  const rows: RowResult[] = [];
  for (const search of SEARCHES) {
    const counts = new Map<string, number>();
    // The login shell finds rg on its PATH; the tree is the local rows' own (a loopback sshd: the same machine).
    const rgCommand = ["rg", ...rgArgs(search), root].map(shellQuote).join(" ");
    const candidates: Candidate[] = [
      ...ssh.envs.map(({ name, env }) => counted(name, () => searchCount(env, root, search), counts)),
    ];
    if (withRg) {
      candidates.push(
        counted("ssh-rg", () => countLines("ssh", [...ssh.sshArgs, rgCommand], "/"), counts, true),
        counted("ssh2-exec-rg", () => ssh.execChannelCountLines(rgCommand), counts, true),
      );
    }
    rows.push(
      await measureRow({
        name: `searchFiles ${files.toLocaleString("en")} files over SSH: ${search.name}`,
        unit: "ms",
        rounds,
        perRound: 1,
        candidates,
      }),
    );
    log(
      `searchFiles over SSH ${search.name}: lines found: ${[...counts].map(([name, n]) => `${name} ${n}`).join(", ")}`,
    );
  }
  return rows;
}
