/**
 * `outpost grep local …` end to end (the real agent on this machine), next to ripgrep run on the same files with
 * the same flags: the same lines, ripgrep's format and exit codes.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "./run-cli.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-cli-grep-"));
  await mkdir(join(dir, "src/deep"), { recursive: true });
  await writeFile(join(dir, ".gitignore"), "*.log\n");
  await writeFile(join(dir, "a.txt"), "one\nFoo bar\ntwo\nthree\nfoo again\n");
  await writeFile(join(dir, "skip.log"), "foo\n");
  await writeFile(join(dir, "src/deep/b.ts"), "const foo = 1;\nconst x = foo.bar;\n");
  await writeFile(join(dir, "src/c.js"), "nothing\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** ripgrep's output for the same search, sorted (ripgrep prints files in its walk's order). */
function ripgrep(args: string[]): { code: number | null; lines: string[] } {
  const rg = spawnSync(
    "rg",
    ["--no-config", "--hidden", "--no-require-git", "--line-number", "--no-heading", "--with-filename", ...args],
    {
      cwd: dir,
      // No stdin: ripgrep given no path would search a piped stdin instead of the directory.
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
      env: { ...process.env, HOME: dir },
    },
  );
  if (rg.error) throw new Error(`this test needs ripgrep (rg, Debian package ripgrep): ${rg.error.message}`);
  return { code: rg.status, lines: rg.stdout.split("\n").filter(Boolean) };
}

describe("outpost grep", () => {
  const cases: [string, string[]][] = [
    ["a literal", ["--fixed-strings", "foo."]],
    ["a regex", ["fo+ (bar|again)"]],
    ["case-insensitive in a directory", ["--ignore-case", "foo", "src"]],
    ["a glob", ["--glob", "*.ts", "foo"]],
    ["a single file", ["-w", "foo", "src/deep/b.ts"]],
  ];
  for (const [name, args] of cases) {
    it(`prints what rg prints: ${name}`, async () => {
      const ours = await run(["grep", "--cwd", dir, "local", ...args]);
      const theirs = ripgrep(args);
      expect(ours.code).toBe(0);
      expect(theirs.code).toBe(0);
      expect(ours.stdout.split("\n").filter(Boolean).sort()).toEqual([...theirs.lines].sort());
    });
  }

  it("prints context as rg does, with -- between groups", async () => {
    const ours = await run(["grep", "--cwd", dir, "local", "--context", "1", "--ignore-case", "foo", "a.txt"]);
    expect(ours.stdout).toBe("a.txt-1-one\na.txt:2:Foo bar\na.txt-3-two\na.txt-4-three\na.txt:5:foo again\n");
    const apart = await run(["grep", "--cwd", dir, "local", "--context", "0", "--ignore-case", "foo", "a.txt"]);
    expect(apart.stdout).toBe("a.txt:2:Foo bar\na.txt:5:foo again\n");
    const gap = await run(["grep", "--cwd", dir, "local", "--context", "1", "foo", "."]);
    expect(gap.stdout.split("\n").filter(Boolean)).toEqual(
      ripgrep(["--context", "1", "foo", "."]).lines.sort((a, b) =>
        a.startsWith("./a.txt") === b.startsWith("./a.txt") ? 0 : a.startsWith("./a.txt") ? -1 : 1,
      ),
    );
    expect(ripgrep(["--context", "1", "--ignore-case", "foo", "a.txt"]).lines).toEqual(
      ours.stdout.split("\n").filter(Boolean),
    );
  });

  it("exits 1 when nothing matched, 2 on an error, and stops at --limit", async () => {
    const none = await run(["grep", "--cwd", dir, "local", "absent"]);
    expect([none.code, none.stdout]).toEqual([1, ""]);
    const bad = await run(["grep", "--cwd", dir, "local", "(?=x)"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("look-around");
    const missing = await run(["grep", "--cwd", dir, "local", "x", "missing"]);
    expect(missing.code).toBe(2);
    const limited = await run(["grep", "--cwd", dir, "local", "--limit", "1", "foo"]);
    expect([limited.code, limited.stdout]).toEqual([0, "a.txt:5:foo again\n"]);
    expect(limited.stderr).toContain("limit of 1");
  });
});
