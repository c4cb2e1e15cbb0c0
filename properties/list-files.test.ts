/**
 * `listFiles` against git itself (spec/semantics.md §19): random trees — names with spaces, unicode, `#`/`!`
 * prefixes, dots and brackets — with random `.gitignore` files at random depths, a random `.git/info/exclude` and
 * random `.ignore` files, all written with patterns of every form LF8–LF10 name; some files are symbolic links (to
 * a directory, or dangling), which LF11 lists as files and git too.
 *
 * - In a fresh repository with nothing committed, `listFiles` equals `git ls-files --others --exclude-standard`.
 *   git does not read `.ignore`, so it is modelled apart: git runs on a copy of the tree in which each `.ignore`'s
 *   lines are appended to the `.gitignore` of its directory (LF5: they come after, so they win), which is exactly
 *   how LF5 ranks them.
 * - With every file committed before the ignore files are written, `listFiles` is unchanged (no index is read),
 *   while `git ls-files --cached` still shows the committed files the rules ignore.
 *
 * git runs with no system or global configuration (and a throwaway HOME), so `core.excludesFile` — which LF5 says
 * `listFiles` never reads — cannot leak in.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LocalExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { afterAll, describe, expect } from "vitest";
import { needTool } from "../tools/system-tools.js";
import { propertyTest } from "./harness.js";

const BASE_RUNS = 40;
const BASE_TIME_MS = 25_000;
const LIVE = { abortSignal: undefined };

/** Names of files and directories (never `.git`, `.gitignore` or `.ignore`, which the generator places itself). */
const NAMES = [
  "a",
  "b.txt",
  "c.o",
  "x y.log",
  "é",
  "日本",
  "#h",
  "!n",
  ".hid",
  "build",
  "Foo",
  "foo",
  "[br]",
  "q1",
  "sp ",
  "deep",
  "a.TXT",
  "-dash",
];

/** Pattern lines of every form: literals, wildcards, anchoring, `**`, directory-only, negation, escapes, comments. */
const LINES = [
  "a",
  "*.o",
  "*.log",
  "/a",
  "a/b.txt",
  "deep/a",
  "**/c.o",
  "**/deep",
  "build/",
  "build",
  "!c.o",
  "!build/",
  "!a",
  "!/deep",
  "!*.txt",
  "\\#h",
  "#h",
  "\\!n",
  "!n",
  "[ab]*",
  "[!a-c]*",
  "[[:upper:]]*",
  "q?",
  "?",
  "*",
  "deep/**",
  "**/deep/**",
  "a/**/c.o",
  "*/b.txt",
  "foo",
  "Foo/",
  "*.TXT",
  "sp ",
  "sp\\ ",
  "x y.log   ",
  "\\[br]",
  "[br]",
  ".hid",
  "!.hid",
  "é",
  "日*",
  "# comment",
  "",
  "*.txt\r",
];

const sandbox = realpathSync(mkdtempSync(join(tmpdir(), "outpost-listfiles-prop-")));
const gitHome = join(sandbox, "home");
mkdirSync(gitHome);
const env = new LocalExecutionEnv({ cwd: sandbox });
afterAll(async () => {
  await env.close();
  rmSync(sandbox, { recursive: true, force: true });
});

/** git with no configuration but the repository's own. */
function git(cwd: string, args: string[]): Buffer {
  return execFileSync(needTool("git"), args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: gitHome,
      XDG_CONFIG_HOME: gitHome,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function nulList(output: Buffer): string[] {
  const paths = output.toString("utf8").split("\0");
  paths.pop();
  return paths;
}

/** A generated tree: file paths, and ignore files by directory ("" is the root). */
interface Tree {
  files: string[];
  /** Files that are symbolic links instead: to "." (a directory) or to nothing. */
  links: Map<string, string>;
  gitignores: Map<string, string>;
  ignores: Map<string, string>;
  exclude: string;
}

const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"));
const linesArb = fc.array(fc.constantFrom(...LINES), { maxLength: 6 }).map((lines) => lines.join("\n"));

const treeArb = fc
  .record({
    paths: fc.uniqueArray(pathArb, { minLength: 1, maxLength: 25 }),
    gitignoreLines: fc.array(linesArb, { minLength: 1, maxLength: 5 }),
    ignoreLines: fc.array(linesArb, { maxLength: 3 }),
    exclude: linesArb,
    picks: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    bom: fc.boolean(),
    linkPicks: fc.array(fc.nat(), { maxLength: 3 }),
  })
  .map(({ paths, gitignoreLines, ignoreLines, exclude, picks, bom, linkPicks }): Tree => {
    // A path cannot be both a file and a directory: a path that is a prefix of another is a directory.
    const dirs = new Set<string>([""]);
    for (const path of paths) {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
    }
    const files = paths.filter((path) => !dirs.has(path));
    const dirList = [...dirs].sort();
    const at = (i: number) => dirList[picks[i % picks.length] % dirList.length];
    const gitignores = new Map<string, string>();
    gitignoreLines.forEach((lines, i) => {
      gitignores.set(at(i), (i === 0 && bom ? "\uFEFF" : "") + lines);
    });
    const ignores = new Map<string, string>();
    ignoreLines.forEach((lines, i) => {
      // Often next to a .gitignore, so the two files' precedence (LF5) matters.
      ignores.set(at(i % 2 === 0 ? i : i + 5), lines);
    });
    const links = new Map<string, string>();
    for (const pick of linkPicks) links.set(files[pick % files.length], pick % 2 === 0 ? "." : "missing");
    return { files, links, gitignores, ignores, exclude };
  });

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Writes the tree into a fresh repository; `forGit` folds each `.ignore` into its directory's `.gitignore`. */
function materialize(root: string, tree: Tree, forGit: boolean, withIgnoreFiles = true): void {
  mkdirSync(root, { recursive: true });
  git(root, ["init", "-q"]);
  for (const file of tree.files) {
    const target = tree.links.get(file);
    if (target === undefined) write(join(root, file), "x");
    else {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      symlinkSync(target, join(root, file));
    }
  }
  if (withIgnoreFiles) writeIgnoreFiles(root, tree, forGit);
}

function writeIgnoreFiles(root: string, tree: Tree, forGit: boolean): void {
  write(join(root, ".git", "info", "exclude"), tree.exclude);
  // Every directory with a .ignore gets a .gitignore too, so both trees hold the same names.
  const dirs = new Set([...tree.gitignores.keys(), ...tree.ignores.keys()]);
  for (const dir of dirs) {
    let gitignore = tree.gitignores.get(dir) ?? "";
    const ignore = tree.ignores.get(dir);
    if (ignore !== undefined) {
      write(join(root, dir, ".ignore"), ignore);
      if (forGit) gitignore += `\n${ignore}`;
    }
    write(join(root, dir, ".gitignore"), gitignore);
  }
}

async function listed(root: string): Promise<string[]> {
  const result = await env.listFiles(root, undefined, LIVE);
  if (!result.ok) throw new Error(`listFiles failed: ${result.error.code} ${result.error.message}`);
  expect(result.value.truncated).toBe(false);
  return result.value.paths;
}

function describeTree([tree]: [Tree]): string {
  const lines = [
    `  files: ${JSON.stringify(tree.files)}`,
    `  links: ${JSON.stringify([...tree.links])}`,
    `  info/exclude: ${JSON.stringify(tree.exclude)}`,
  ];
  for (const [dir, text] of tree.gitignores) lines.push(`  ${dir || "."}/.gitignore: ${JSON.stringify(text)}`);
  for (const [dir, text] of tree.ignores) lines.push(`  ${dir || "."}/.ignore: ${JSON.stringify(text)}`);
  return lines.join("\n");
}

let runs = 0;

describe("listFiles against git", () => {
  propertyTest(
    "listFiles equals git ls-files --others --exclude-standard in a fresh repository",
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
    () =>
      fc.asyncProperty(treeArb, async (tree) => {
        const run = join(sandbox, `run-${runs++}`);
        try {
          materialize(join(run, "ours"), tree, false);
          materialize(join(run, "git"), tree, true);
          const expected = nulList(git(join(run, "git"), ["ls-files", "-z", "--others", "--exclude-standard"]));
          expect(await listed(join(run, "ours"))).toEqual(expected);
        } finally {
          rmSync(run, { recursive: true, force: true });
        }
      }),
    { runTimeoutMs: 20_000, describe: describeTree },
  );

  propertyTest(
    "a committed file that matches an ignore rule is absent from listFiles, present in git ls-files",
    { runs: Math.ceil(BASE_RUNS / 2), timeMs: BASE_TIME_MS / 2 },
    () =>
      fc.asyncProperty(treeArb, async (tree) => {
        const run = join(sandbox, `run-${runs++}`);
        try {
          materialize(join(run, "fresh"), tree, true);
          const expected = nulList(git(join(run, "fresh"), ["ls-files", "-z", "--others", "--exclude-standard"]));
          // Commit every file first, then add the ignore rules.
          const committed = join(run, "committed");
          materialize(committed, tree, false, false);
          git(committed, ["add", "-A"]);
          git(committed, ["commit", "-q", "--allow-empty", "-m", "all"]);
          writeIgnoreFiles(committed, tree, false);
          const cached = nulList(git(committed, ["ls-files", "-z", "--cached"]));
          expect(cached.sort()).toEqual([...tree.files].sort());
          const ours = await listed(committed);
          // git's view of the fresh copy lists the folded .gitignore; here the .ignore files are separate.
          expect(ours).toEqual(expected);
          const ignoredButTracked = cached.filter((path) => !ours.includes(path));
          for (const path of ignoredButTracked) expect(expected).not.toContain(path);
        } finally {
          rmSync(run, { recursive: true, force: true });
        }
      }),
    { runTimeoutMs: 20_000, describe: describeTree },
  );
});
