/**
 * `outpost grep local …` (the real agent's searchFiles) against the real `rg -n` on the same small tree: the same
 * lines, paths, context and `--` separators, the same exit status (0 matched, 1 none, 2 a failure). ripgrep runs
 * with `--sort path` (one thread, files in path order, as the agent orders them), `--hidden` and `--no-require-git`
 * (the agent's defaults: dot-files searched, `.gitignore` honoured outside a repository) and no config file.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeIntoHead, run } from "./run-cli.js";

const FAKE_AGENT = fileURLToPath(new URL("../../sdk/test/fixtures/fake-agent.mjs", import.meta.url));

let dir: string;
/** The tree searched (no names where ripgrep's per-directory sort and byte order of paths disagree). */
let tree: string;
/** A HOME without a git config, for ripgrep. */
let home: string;

async function file(path: string, content: string | Buffer): Promise<void> {
  await mkdir(join(tree, path, ".."), { recursive: true });
  await writeFile(join(tree, path), content);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-cli-grep-"));
  tree = join(dir, "tree");
  home = join(dir, "home");
  await mkdir(home);
  await file(".gitignore", "ignored/\n*.log\n");
  await file("ignored/x.txt", "foo in an ignored directory\n");
  await file("debug.log", "foo in an ignored file\n");
  await file(".hidden/h.txt", "a hidden foo\n");
  await file("a.txt", "alpha\nfoo one\nbeta\ngamma\ndelta\nepsilon\nfoo two\nfoo three\nzeta\nFOO four\n");
  await file("b.ts", 'export const foo = "a.b";\nconst axb = 1;\n// Foobar and foo_bar and foo-bar\n');
  await file("src/c.ts", "function food() {}\n\tfoo(1);\n");
  await file("src/deep/d.txt", "crlf foo\r\nplain\r\nfoo end\r\n");
  await file("src/deep/e.txt", "no final newline foo");
  await file("bom.txt", "\uFEFFfoo after a BOM\nsecond\n");
  await file("bin.dat", Buffer.from("foo\0binary\n"));
  await file("unicode.txt", "été foo\nÉTÉ FOO\nnaïve\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** ripgrep's output and status for `args`, run in the tree. */
function rg(args: readonly string[]): { code: number | null; stdout: string } {
  const result = spawnSync(
    "rg",
    ["--no-config", "--sort", "path", "--hidden", "--no-require-git", "--line-number", "--no-heading", ...args],
    // stdin from /dev/null: with a pipe there, rg would search stdin instead of the working directory.
    { cwd: tree, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: home } },
  );
  if (result.error !== undefined) throw new Error(`cannot run rg (ripgrep, Debian's ripgrep): ${result.error.message}`);
  return { code: result.status, stdout: result.stdout };
}

/** `outpost grep local <args>` in the tree. */
function outpostGrep(args: readonly string[]) {
  return run(["--cwd", tree, "grep", "local", ...args]);
}

describe("outpost grep prints what rg -n prints", () => {
  const cases: [string, string[]][] = [
    ["a literal in the whole tree", ["foo"]],
    ["a regex with alternation and a class", ["f[o]+ (one|two)|^const"]],
    ["ignoring case", ["-i", "foo"]],
    ["smart case, lower-case pattern", ["-S", "foo"]],
    ["smart case, an uppercase letter", ["-S", "FOO"]],
    ["a fixed string with a metacharacter", ["-F", "a.b"]],
    ["the same as a regex", ["a.b"]],
    ["whole words", ["-w", "foo"]],
    ["context around matches, groups separated", ["-C", "1", "foo"]],
    ["after-context only", ["-A", "2", "foo"]],
    ["before-context only", ["-B", "3", "foo"]],
    ["a context larger than the file", ["-C", "20", "foo", "a.txt"]],
    ["at most one match per file", ["-m", "1", "foo"]],
    ["a glob", ["--glob", "*.ts", "foo"]],
    ["two globs, one negated", ["-g", "*.txt", "-g", "!src/**", "foo"]],
    ["a directory", ["foo", "src"]],
    ["a directory with a trailing slash", ["foo", "src/"]],
    ["a directory as ./", ["foo", "./"]],
    ["one file: no path printed", ["foo", "a.txt"]],
    ["one file with context", ["-C", "1", "foo", "src/deep/d.txt"]],
    ["CRLF lines and $", ["end\\r?$", "src/deep"]],
    ["a BOM file", ["foo", "bom.txt"]],
    ["Unicode text, case folded", ["-i", "été"]],
    ["an empty pattern", ["", "src"]],
    ["no match", ["zzz-no-such-text"]],
  ];
  for (const [label, args] of cases) {
    it(label, async () => {
      const expected = rg(args);
      const actual = await outpostGrep(args);
      expect(actual.stderr).toBe("");
      expect({ code: actual.code, stdout: actual.stdout }).toEqual(expected);
    });
  }

  it("ignores what rg ignores without --no-ignore and --no-hidden, and searches it with them", async () => {
    const plain = await outpostGrep(["foo"]);
    expect(plain.stdout).not.toMatch(/ignored|debug\.log|bin\.dat/);
    expect(plain.stdout).toContain(".hidden/h.txt:1:a hidden foo\n");
    const everything = await outpostGrep(["--no-ignore", "--no-hidden", "foo"]);
    // rg's --no-hidden is its default: dot-files left out; --no-ignore searches what .gitignore names.
    const rgEverything = spawnSync(
      "rg",
      ["--no-config", "--sort", "path", "--no-ignore", "--line-number", "--no-heading", "foo"],
      { cwd: tree, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: home } },
    );
    expect(everything.stdout).toBe(rgEverything.stdout);
    expect(everything.stdout).toContain("ignored/x.txt:1:");
  });

  it("stops at --limit with a notice, printing rg's first lines", async () => {
    const all = rg(["foo"]).stdout.split("\n");
    const limited = await outpostGrep(["--limit", "3", "foo"]);
    expect(limited).toMatchObject({
      code: 0,
      stdout: `${all.slice(0, 3).join("\n")}\n`,
      stderr: "outpost: grep: stopped at the limit of 3 matches\n",
    });
  });
});

describe("failures exit 2, as rg's do", () => {
  it("a missing directory", async () => {
    expect(rg(["foo", "missing"]).code).toBe(2);
    const result = await outpostGrep(["foo", "missing"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(
      `outpost: grep missing: ENOENT: no such file or directory, scandir '${join(tree, "missing")}' [not_found]\n`,
    );
  });

  it("a pattern neither engine takes (look-around)", async () => {
    expect(rg(["a(?=b)"]).code).toBe(2);
    const result = await outpostGrep(["a(?=b)"]);
    expect(result).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "outpost: grep .: pattern: look-around is not supported [invalid]\n",
    });
  });

  it("a bad option value is a usage error (2)", async () => {
    const result = await outpostGrep(["-C", "x", "foo"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^outpost: .*-C, --context.* \[usage\]\n/);
  });

  it("an agent without searchFiles: not_supported, exit 2", async () => {
    const fake = join(dir, "old-agent.sh");
    await writeFile(
      fake,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_AGENT)} good "$@"\n`,
      {
        mode: 0o755,
      },
    );
    const result = await run(["--agent-binary", fake, "grep", "local", "foo", tree]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(
      `outpost: grep ${tree}: the agent does not support searchFiles; this agent is older than the feature (\`outpost deploy\` a newer one) [not_supported]\n`,
    );
  });
});

describe("grep in a pipe", () => {
  it("ends quietly by SIGPIPE when its reader goes away", async () => {
    const many = join(dir, "many");
    await mkdir(many);
    const lines = Array.from({ length: 2000 }, (_, index) => `match ${index} ${"x".repeat(60)}\n`).join("");
    await Promise.all(Array.from({ length: 50 }, (_, index) => writeFile(join(many, `f${index}.txt`), lines)));
    const { head, cli } = await pipeIntoHead(["grep", "local", "match", many], ["-n", "1"]);
    expect(head).toMatch(/^\S+\/f0\.txt:1:match 0 x{60}\n$/);
    expect(cli.stderr).toBe("");
    expect({ code: cli.code, signal: cli.signal }).toEqual({ code: null, signal: "SIGPIPE" });
  });
});
