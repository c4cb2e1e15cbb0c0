/**
 * `searchFiles`, Outpost's extension (spec/semantics.md §23). The reference has none: on a target that does not
 * declare it (`ConformanceOptions.searchFiles`), every case here is registered as skipped, by name. Expected values
 * are literal, as ripgrep 13 prints them for the same files (`rg --json`) except where SF4–SF8 state a difference
 * (the empty matches of `""` inside `é`); the agent's differential test compares with ripgrep on generated trees.
 */
import type { Context, ExecutionEnv, FileError, Result } from "@outpost/sdk";
import { abortable, aborted, assert, at, fails, live, put, quote, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** The options, match and result of `searchFiles`, as the SDK exports them (restated: the suite needs the shape). */
interface SearchOptions {
  literal?: boolean;
  ignoreCase?: boolean;
  smartCase?: boolean;
  wordRegexp?: boolean;
  glob?: string | readonly string[];
  hidden?: boolean;
  ignore?: boolean;
  before?: number;
  after?: number;
  maxCount?: number;
  limit?: number;
  onPage?: (matches: Match[]) => void;
}
interface Match {
  path: string;
  line: number;
  text: string;
  submatches: { start: number; end: number }[];
  before: string[];
  after: string[];
}
type SearchResult = Result<{ matches: Match[]; truncated: boolean; skipped: number }, FileError>;
type SearchFiles = (
  path: string,
  pattern: string,
  options: SearchOptions | undefined,
  context: Context,
) => Promise<SearchResult>;

/** The env's `searchFiles`; a target that declares it but lacks it fails the case. */
function searching(env: ExecutionEnv): SearchFiles {
  const method = (env as ExecutionEnv & { searchFiles?: SearchFiles }).searchFiles;
  assert.equal(typeof method, "function", "the target declares searchFiles but the env has no searchFiles method");
  return (path, pattern, options, context) => (method as SearchFiles).call(env, path, pattern, options, context);
}

/** Writes files. */
async function files(env: ExecutionEnv, tree: Record<string, string | Uint8Array>): Promise<void> {
  for (const [name, content] of Object.entries(tree)) await put(env, name, content);
}

/** A match as "path:line:text[start-end …]", the form the expectations are written in. */
function brief(matches: readonly Match[]): string[] {
  return matches.map(
    (m) => `${m.path}:${m.line}:${m.text}[${m.submatches.map((s) => `${s.start}-${s.end}`).join(" ")}]`,
  );
}

/** Registers the searchFiles cases. */
export function searchFilesCases(setup: Setup, define: Define): void {
  const skip = setup.searchFiles ? undefined : "the env has no searchFiles (Outpost's extension)";
  const each = (
    name: string,
    rule: string,
    body: (search: SearchFiles, env: ExecutionEnv) => Promise<void>,
    timeoutMs?: number,
  ) => define(`searchFiles: ${name}`, rule, (env) => body(searching(env), env), { skip, timeoutMs });
  const found = async (search: SearchFiles, path: string, pattern: string, options?: SearchOptions) => {
    const result = value(await search(path, pattern, options, live), `searchFiles ${path} ${pattern}`);
    assert.equal(result.truncated, false, "truncated without a limit");
    return brief(result.matches);
  };

  each("returns matches relative to the root with truncated and skipped", "SF1 SF6 SF11", async (search, env) => {
    await files(env, { "b.txt": "one foo\ntwo\nfoo foo\n", "a/c.txt": "foo", "a.txt": "x\n" });
    const result = value(await search("", "foo", undefined, live), "search of the cwd");
    assert.deepEqual(Object.keys(result).sort(), ["matches", "skipped", "truncated"]);
    assert.deepEqual(result.matches[0], {
      path: "a/c.txt",
      line: 1,
      text: "foo",
      submatches: [{ start: 0, end: 3 }],
      before: [],
      after: [],
    });
    assert.deepEqual(brief(result.matches), ["a/c.txt:1:foo[0-3]", "b.txt:1:one foo[4-7]", "b.txt:3:foo foo[0-3 4-7]"]);
    assert.deepEqual([result.truncated, result.skipped], [false, 0]);
    assert.deepEqual(await found(search, at(env, "a"), "foo"), ["c.txt:1:foo[0-3]"]);
  });

  each("validates the pattern, then the options, naming the bad one", "SF1 SF3", async (search, env) => {
    const bad: [unknown, string][] = [
      [{ literal: 1 }, "literal"],
      [{ ignoreCase: "y" }, "ignoreCase"],
      [{ smartCase: 0 }, "smartCase"],
      [{ wordRegexp: null }, "wordRegexp"],
      [{ glob: [] }, "glob"],
      [{ hidden: "no" }, "hidden"],
      [{ ignore: 1 }, "ignore"],
      [{ before: -1 }, "before"],
      [{ after: 1001 }, "after"],
      [{ before: 1.5 }, "before"],
      [{ maxCount: 0 }, "maxCount"],
      [{ limit: Number.NaN }, "limit"],
      [{ onPage: "x" }, "onPage"],
    ];
    for (const [options, name] of bad) {
      const error = fails(await search("", "x", options as SearchOptions, live), "invalid", JSON.stringify(options));
      assert.ok(error.message.startsWith(name), `message names ${name}: ${error.message}`);
      assert.equal(error.path, env.cwd);
    }
    const pattern = fails(await search("", 3 as unknown as string, { limit: 0 }, live), "invalid", "pattern");
    assert.ok(pattern.message.startsWith("pattern"), pattern.message);
    fails(await search("", "x", { limit: 0 }, aborted()), "aborted", "abort first", env.cwd);
  });

  each("searches a directory as listFiles walks it, or one file", "SF2", async (search, env) => {
    await files(env, {
      ".gitignore": "*.log\n",
      "a.log": "hit\n",
      "b.ts": "hit\n",
      "c.js": "hit\n",
      ".env": "hit\n",
      "sub/d.ts": "hit\n",
    });
    assert.deepEqual(await found(search, "", "hit"), [
      ".env:1:hit[0-3]",
      "b.ts:1:hit[0-3]",
      "c.js:1:hit[0-3]",
      "sub/d.ts:1:hit[0-3]",
    ]);
    assert.deepEqual(await found(search, "", "hit", { glob: "*.ts", hidden: false }), [
      "b.ts:1:hit[0-3]",
      "sub/d.ts:1:hit[0-3]",
    ]);
    assert.deepEqual(await found(search, "", "hit", { ignore: false, glob: "*.log" }), ["a.log:1:hit[0-3]"]);
    // A file root is searched whatever glob, hidden and ignore say; its matches are named by its base name.
    assert.deepEqual(await found(search, "a.log", "hit", { glob: "*.ts" }), ["a.log:1:hit[0-3]"]);
    fails(await search("missing", "x", undefined, live), "not_found", "missing root", at(env, "missing"));
    fails(await search("b.ts/x", "x", undefined, live), "not_directory", "below a file", at(env, "b.ts", "x"));
  });

  if (setup.symlinks) {
    each("follows a root link, never a link below the root", "SF2", async (search, env) => {
      await files(env, { "real/x.txt": "hit\n" });
      await script(setup, env, "ln -s real link && ln -s real/x.txt file-link");
      assert.deepEqual(await found(search, "link", "hit"), ["x.txt:1:hit[0-3]"]);
      assert.deepEqual(await found(search, "", "hit"), ["real/x.txt:1:hit[0-3]"]);
      assert.deepEqual(await found(search, "file-link", "hit"), ["file-link:1:hit[0-3]"]);
    });
  }

  if (setup.fifos) {
    each("a root that is neither a file nor a directory is invalid", "SF2", async (search, env) => {
      await script(setup, env, "mkfifo pipe");
      fails(await search("pipe", "x", undefined, live), "invalid", "FIFO root", at(env, "pipe"));
    });
  }

  each("speaks ripgrep's pattern language and flags", "SF4", async (search, env) => {
    await files(env, { f: "Foo bar\nfoo.bar\nfoobar\nxfoo foo_x -foo\nbaz é\n" });
    const cases: [string, SearchOptions, string[]][] = [
      ["foo.?bar", {}, ["f:2:foo.bar[0-7]", "f:3:foobar[0-6]"]],
      ["foo.bar", { literal: true }, ["f:2:foo.bar[0-7]"]],
      ["^foo", { ignoreCase: true }, ["f:1:Foo bar[0-3]", "f:2:foo.bar[0-3]", "f:3:foobar[0-3]"]],
      ["foo b", { smartCase: true }, ["f:1:Foo bar[0-5]"]],
      ["Foo", { smartCase: true }, ["f:1:Foo bar[0-3]"]],
      [
        "Foo",
        { smartCase: true, ignoreCase: true },
        ["f:1:Foo bar[0-3]", "f:2:foo.bar[0-3]", "f:3:foobar[0-3]", "f:4:xfoo foo_x -foo[1-4 5-8 12-15]"],
      ],
      ["foo", { wordRegexp: true }, ["f:2:foo.bar[0-3]", "f:4:xfoo foo_x -foo[12-15]"]],
      ["bar$|^baz", {}, ["f:1:Foo bar[4-7]", "f:2:foo.bar[4-7]", "f:3:foobar[3-6]", "f:5:baz é[0-3]"]],
      ["\\pL+ \\pL$", {}, ["f:5:baz é[0-6]"]],
      ["[^a-z ]x", {}, ["f:4:xfoo foo_x -foo[8-10]"]],
      [
        "",
        {},
        [
          "f:1:Foo bar[0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7]",
          "f:2:foo.bar[0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7]",
          "f:3:foobar[0-0 1-1 2-2 3-3 4-4 5-5 6-6]",
          "f:4:xfoo foo_x -foo[0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7 8-8 9-9 10-10 11-11 12-12 13-13 14-14 15-15]",
          "f:5:baz é[0-0 1-1 2-2 3-3 4-4 6-6]",
        ],
      ],
    ];
    for (const [pattern, options, want] of cases) {
      assert.deepEqual(await found(search, "", pattern, options), want, `${pattern} ${JSON.stringify(options)}`);
    }
    const refused: [string, string][] = [
      ["(?=a)", "look-around"],
      ["(?<!a)b", "look-around"],
      ["(a)\\1", "backreferences"],
      ["a\\nb", "line feed"],
      ["a(", "pattern: "],
    ];
    for (const [pattern, naming] of refused) {
      const error = fails(await search("", pattern, undefined, live), "invalid", pattern, env.cwd);
      assert.ok(error.message.startsWith("pattern: ") && error.message.includes(naming), error.message);
    }
  });

  each("lines: LF ends a line, a CR stays, invalid UTF-8 becomes U+FFFD", "SF5", async (search, env) => {
    await files(env, {
      crlf: "one\r\ntwo\r\n",
      bytes: new Uint8Array([0x61, 0xff, 0x62, 0x20, 0x78, 0x0a]),
      last: "a\nb x",
      empty: "",
    });
    assert.deepEqual(await found(search, "", "x"), ["bytes:1:a\uFFFDb x[4-5]", "last:2:b x[2-3]"]);
    assert.deepEqual(await found(search, "crlf", "o$"), []);
    assert.deepEqual(await found(search, "crlf", "o\\r$"), ["crlf:2:two\r[2-4]"]);
    assert.deepEqual(await found(search, "crlf", "[^x]+"), ["crlf:1:one\r[0-4]", "crlf:2:two\r[0-4]"]);
    assert.deepEqual(await found(search, "empty", ""), []);
    // The last line has no LF: the empty match at its very end is not reported (ripgrep's quirk, kept).
    assert.deepEqual(await found(search, "last", "x?$"), ["last:1:a[1-1]", "last:2:b x[2-3]"]);
  });

  each("context lines: before and after, each line given once", "SF7", async (search, env) => {
    await files(env, { f: "1\n2 x\n3\n4\n5 x\n6 x\n7\n8\n9\n10 x\n" });
    const result = value(await search("f", "x", { before: 2, after: 1 }, live), "context");
    assert.deepEqual(
      result.matches.map((m) => [m.line, m.before, m.after]),
      [
        [2, ["1"], ["3"]],
        [5, ["4"], []],
        [6, [], ["7"]],
        [10, ["8", "9"], []],
      ],
    );
  });

  each("a file with a NUL byte gives no match", "SF8", async (search, env) => {
    await files(env, { bin: new Uint8Array([0x68, 0x69, 0x74, 0x0a, 0x00]), text: "hit\n" });
    assert.deepEqual(await found(search, "", "hit"), ["text:1:hit[0-3]"]);
    assert.deepEqual(await found(search, "bin", "hit"), []);
  });

  each(
    "large files are searched across blocks; a line over 8 MiB skips its file",
    "SF9 SF16",
    async (search, env) => {
      const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i + 1}${(i + 1) % 20_000 === 0 ? " hit" : ""}`);
      await files(env, { big: `${lines.join("\n")}\n`, long: `${"y".repeat(8 * 2 ** 20 + 1)}\nhit\n` });
      const result = value(await search("", "hit", { before: 1 }, live), "large");
      assert.deepEqual(
        result.matches.map((m) => `${m.path}:${m.line}:${m.before.join("|")}`),
        ["big:20000:line 19999", "big:40000:line 39999", "big:60000:line 59999"],
      );
      assert.equal(result.skipped, 1);
    },
    60_000,
  );

  define(
    "searchFiles: unreadable files and directories are skipped and counted",
    "SF10",
    async (env) => {
      const search = searching(env);
      await files(env, { "open/a": "hit\n", "closed/b": "hit\n", locked: "hit\n" });
      await script(setup, env, "chmod 000 closed locked");
      try {
        const result = value(await search("", "hit", undefined, live), "search");
        assert.deepEqual(brief(result.matches), ["open/a:1:hit[0-3]"]);
        assert.equal(result.skipped, 2);
      } finally {
        await script(setup, env, `chmod 755 ${quote("closed")} && chmod 644 locked`);
      }
    },
    { skip, permissions: true },
  );

  each("maxCount per file, limit overall with truncated, the same every run", "SF12", async (search, env) => {
    const tree: Record<string, string> = {};
    for (let i = 0; i < 20; i++) tree[`d${i % 3}/f${String(i).padStart(2, "0")}`] = "hit 1\nmiss\nhit 2\nhit 3\n";
    await files(env, tree);
    const all = value(await search("", "hit", undefined, live), "all").matches;
    assert.equal(all.length, 60);
    const perFile = value(await search("", "hit", { maxCount: 2, after: 1 }, live), "maxCount").matches;
    assert.equal(perFile.length, 40);
    assert.deepEqual(perFile[1]?.after, ["hit 3"], "context follows the last match counted");
    for (const limit of [1, 7, 59, 60, 61]) {
      for (let round = 0; round < 2; round++) {
        const result = value(await search("", "hit", { limit }, live), `limit ${limit}`);
        assert.deepEqual(brief(result.matches), brief(all.slice(0, limit)), `limit ${limit}`);
        assert.equal(result.truncated, limit < 60, `truncated at ${limit}`);
      }
    }
  });

  each(
    "pages reach onPage in order, at most 1024 matches, and the result's matches is empty",
    "SF13 SF16",
    async (search, env) => {
      await files(env, { many: `${Array.from({ length: 3000 }, (_, i) => `hit ${i}`).join("\n")}\n` });
      const all = value(await search("many", "hit", undefined, live), "whole").matches;
      const pages: Match[][] = [];
      const result = value(await search("many", "hit", { onPage: (page) => pages.push(page) }, live), "paged");
      assert.deepEqual(result, { matches: [], truncated: false, skipped: 0 });
      assert.ok(pages.length >= 3, `${pages.length} pages`);
      assert.ok(
        pages.every((page) => page.length > 0 && page.length <= 1024),
        "page sizes",
      );
      assert.deepEqual(pages.flat(), all);
      let calls = 0;
      const error = fails(
        await search(
          "many",
          "hit",
          {
            onPage: () => {
              calls++;
              throw new Error("consumer gave up");
            },
          },
          live,
        ),
        "unknown",
        "throwing onPage",
        at(env, "many"),
      );
      assert.equal(error.message, "consumer gave up");
      assert.equal(calls, 1);
    },
    60_000,
  );

  each("aborts at entry and between pages with the root's path", "SF14", async (search, env) => {
    fails(await search("", "x", undefined, aborted()), "aborted", "at entry", env.cwd);
    fails(await search("missing", "x", undefined, aborted()), "aborted", "before the root", at(env, "missing"));
    await files(env, { many: `${Array.from({ length: 5000 }, (_, i) => `hit ${i}`).join("\n")}\n` });
    const { context, controller } = abortable();
    let calls = 0;
    const result = await search(
      "many",
      "hit",
      {
        onPage: () => {
          calls++;
          controller.abort();
        },
      },
      context,
    );
    fails(result, "aborted", "between pages", at(env, "many"));
    assert.equal(calls, 1, "no page after the abort");
  });
}
