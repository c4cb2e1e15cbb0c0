/**
 * `listFiles`, Outpost's extension (spec/semantics.md §19). The reference has no `listFiles`: on a target that
 * does not declare it (`ConformanceOptions.listFiles`), every case here is registered as skipped, by name.
 */
import type { Context, ExecutionEnv, FileError, Result } from "@outpost/sdk";
import { abortable, aborted, assert, at, fails, live, put, quote, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** The options and result of `listFiles`, as the SDK exports them (restated: the suite needs only the shape). */
interface ListOptions {
  glob?: string | readonly string[];
  hidden?: boolean;
  ignore?: boolean;
  limit?: number;
  onPage?: (paths: string[]) => void;
}
type ListResult = Result<{ paths: string[]; truncated: boolean }, FileError>;
type ListFiles = (path: string, options: ListOptions | undefined, context: Context) => Promise<ListResult>;

/** The env's `listFiles`; a target that declares it but lacks it fails the case. */
function listing(env: ExecutionEnv): ListFiles {
  const method = (env as ExecutionEnv & { listFiles?: ListFiles }).listFiles;
  assert.equal(typeof method, "function", "the target declares listFiles but the env has no listFiles method");
  return (path, options, context) => (method as ListFiles).call(env, path, options, context);
}

/** Writes files (content "" unless given); names ending in "/" become directories. */
async function files(env: ExecutionEnv, tree: Record<string, string> | string[]): Promise<void> {
  const entries = Array.isArray(tree) ? tree.map((name) => [name, ""] as const) : Object.entries(tree);
  for (const [name, content] of entries) {
    if (name.endsWith("/")) value(await env.createDir(name, { recursive: true }, live), `createDir ${name}`);
    else await put(env, name, content);
  }
}

/** Byte order of strings, as LF12 sorts. */
function byteOrder(paths: readonly string[]): string[] {
  return [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** Registers the listFiles cases. */
export function listFilesCases(setup: Setup, define: Define): void {
  const skip = setup.listFiles ? undefined : "the env has no listFiles (Outpost's extension)";
  const each = (
    name: string,
    rule: string,
    body: (list: ListFiles, env: ExecutionEnv) => Promise<void>,
    timeoutMs?: number,
  ) => define(`listFiles: ${name}`, rule, (env) => body(listing(env), env), { skip, timeoutMs });
  const paths = async (list: ListFiles, path: string, options?: ListOptions): Promise<string[]> => {
    const result = value(await list(path, options, live), `listFiles ${path} ${JSON.stringify(options)}`);
    assert.equal(result.truncated, false, "truncated without a limit");
    return result.paths;
  };

  each("returns paths relative to the resolved root, and truncated", "LF1 LF12", async (list, env) => {
    await files(env, ["a/b/c.txt", "a/d.txt", "top.txt", "empty/"]);
    const result = value(await list("", undefined, live), "listFiles of the cwd");
    assert.deepEqual(Object.keys(result).sort(), ["paths", "truncated"]);
    assert.deepEqual(result.paths, ["a/b/c.txt", "a/d.txt", "top.txt"]);
    assert.equal(result.truncated, false);
    assert.deepEqual(await paths(list, "a"), ["b/c.txt", "d.txt"]);
    assert.deepEqual(await paths(list, at(env, "a", "b", "..")), ["b/c.txt", "d.txt"]);
    assert.deepEqual(await paths(list, "empty"), []);
  });

  each("fails not_found, not_directory with the root's path", "LF2 E2", async (list, env) => {
    await files(env, ["f.txt"]);
    fails(await list("missing", undefined, live), "not_found", "missing root", at(env, "missing"));
    fails(await list("f.txt", undefined, live), "not_directory", "file root", at(env, "f.txt"));
    fails(await list("f.txt/below", undefined, live), "not_directory", "below a file", at(env, "f.txt", "below"));
  });

  each("never filters the root itself or what is above it", "LF2", async (list, env) => {
    await files(env, { ".gitignore": "ignored/\n", "ignored/.hidden/x": "" });
    value(await env.createDir(".git", undefined, live), "createDir .git");
    assert.deepEqual(await paths(list, "ignored/.hidden", { hidden: false }), ["x"]);
  });

  if (setup.symlinks) {
    each("follows a root link, not_found for a dangling one", "LF2", async (list, env) => {
      await files(env, ["real/x"]);
      await script(setup, env, "ln -s real link && ln -s gone dangling");
      assert.deepEqual(await paths(list, "link"), ["x"]);
      fails(await list("dangling", undefined, live), "not_found", "dangling root", at(env, "dangling"));
    });
  }

  each("rejects bad options with invalid, naming the option", "LF3", async (list, env) => {
    const bad: [unknown, string][] = [
      [{ glob: 3 }, "glob"],
      [{ glob: [] }, "glob"],
      [{ glob: ["a", 1] }, "glob"],
      [{ hidden: "yes" }, "hidden"],
      [{ ignore: 1 }, "ignore"],
      [{ limit: 0 }, "limit"],
      [{ limit: 1.5 }, "limit"],
      [{ limit: -1 }, "limit"],
      [{ limit: Number.NaN }, "limit"],
      [{ onPage: "x" }, "onPage"],
    ];
    for (const [options, name] of bad) {
      const error = fails(await list("", options as ListOptions, live), "invalid", JSON.stringify(options), env.cwd);
      assert.ok(error.message.startsWith(name), `message names ${name}: ${error.message}`);
    }
    // Checked after the entry checkpoint, in order: the first bad option is named.
    fails(await list("", { limit: 0 } as ListOptions, aborted()), "aborted", "abort first", env.cwd);
    const first = fails(await list("", { hidden: 1, limit: 0 } as unknown as ListOptions, live), "invalid", "two");
    assert.ok(first.message.startsWith("hidden"));
  });

  each("hidden defaults to true; false leaves out dot-files and dot-directories", "LF3", async (list, env) => {
    await files(env, [".env", ".config/a", "dir/.hidden", "dir/seen", "v.1"]);
    assert.deepEqual(await paths(list, ""), [".config/a", ".env", "dir/.hidden", "dir/seen", "v.1"]);
    assert.deepEqual(await paths(list, "", { hidden: true }), await paths(list, ""));
    assert.deepEqual(await paths(list, "", { hidden: false }), ["dir/seen", "v.1"]);
  });

  each("ignore: false lists ignored files, never .git", "LF3 LF7", async (list, env) => {
    await files(env, { ".gitignore": "*.log\n", "a.log": "", "b.txt": "", ".git/HEAD": "", "sub/.git": "x" });
    assert.deepEqual(await paths(list, ""), [".gitignore", "b.txt"]);
    assert.deepEqual(await paths(list, "", { ignore: false }), [".gitignore", "a.log", "b.txt"]);
    assert.deepEqual(await paths(list, "", { ignore: false, hidden: true }), [".gitignore", "a.log", "b.txt"]);
  });

  each("glob selects like a root .gitignore would ignore", "LF4", async (list, env) => {
    await files(env, ["a.ts", "a.d.ts", "src/b.ts", "src/c.js", "src/test/t.ts", "test/u.ts", "x/test/deep/v.ts"]);
    assert.deepEqual(await paths(list, "", { glob: "*.ts" }), [
      "a.d.ts",
      "a.ts",
      "src/b.ts",
      "src/test/t.ts",
      "test/u.ts",
      "x/test/deep/v.ts",
    ]);
    assert.deepEqual(await paths(list, "", { glob: ["*.ts", "!*.d.ts"] }), [
      "a.ts",
      "src/b.ts",
      "src/test/t.ts",
      "test/u.ts",
      "x/test/deep/v.ts",
    ]);
    assert.deepEqual(await paths(list, "", { glob: "src/**" }), ["src/b.ts", "src/c.js", "src/test/t.ts"]);
    assert.deepEqual(await paths(list, "", { glob: "src/" }), ["src/b.ts", "src/c.js", "src/test/t.ts"]);
    assert.deepEqual(await paths(list, "", { glob: "**/test/*.ts" }), ["src/test/t.ts", "test/u.ts"]);
    assert.deepEqual(await paths(list, "", { glob: "/*.ts" }), ["a.d.ts", "a.ts"]);
    await files(env, { ".gitignore": "src/\n" });
    assert.deepEqual(await paths(list, "", { glob: "src/**" }), [], "globs never bring back ignored files");
  });

  each(".gitignore at every level, .ignore over .gitignore, info/exclude", "LF5 LF9", async (list, env) => {
    await files(env, {
      ".git/info/exclude": "secret\n!also-excluded\n",
      ".gitignore": "*.o\n/only-top\nalso-excluded\n",
      secret: "",
      "also-excluded": "",
      "a.o": "",
      "only-top": "",
      "keep.txt": "",
      "sub/only-top": "",
      "sub/.gitignore": "!*.o\nlocal\n",
      "sub/b.o": "",
      "sub/local": "",
      "sub/deeper/local": "",
      "sub/deeper/c.o": "",
      "other/.gitignore": "*.txt\n",
      "other/.ignore": "!keep.txt\n",
      "other/keep.txt": "",
      "other/drop.txt": "",
    });
    assert.deepEqual(await paths(list, ""), [
      ".gitignore",
      "keep.txt",
      "other/.gitignore",
      "other/.ignore",
      "other/keep.txt",
      "sub/.gitignore",
      "sub/b.o",
      "sub/deeper/c.o",
      "sub/only-top",
    ]);
    // Listing a subdirectory still applies the rules above it within the repository.
    assert.deepEqual(await paths(list, "sub/deeper"), ["c.o"]);
    assert.deepEqual(await paths(list, "other"), [".gitignore", ".ignore", "keep.txt"]);
  });

  each("ignore files count outside a repository, from the root down only", "LF5 LF6", async (list, env) => {
    await files(env, { ".gitignore": "*.txt\n", "plain/.gitignore": "*.log\n", "plain/a.log": "", "plain/b.txt": "" });
    assert.deepEqual(await paths(list, "plain"), [".gitignore", "b.txt"]);
  });

  if (setup.symlinks) {
    each("an ignore file that is a symbolic link is not read", "LF5", async (list, env) => {
      await files(env, { rules: "*.txt\n", "a.txt": "" });
      await script(setup, env, "ln -s rules .gitignore");
      assert.deepEqual(await paths(list, ""), [".gitignore", "a.txt", "rules"]);
    });
  }

  each("a nested repository has only its own rules", "LF6", async (list, env) => {
    await files(env, {
      ".git/info/exclude": "*.x\n",
      ".gitignore": "*.o\n",
      "in/.git/info/exclude": "*.y\n",
      "in/.gitignore": "*.z\n",
      "in/a.o": "",
      "in/a.x": "",
      "in/a.y": "",
      "in/a.z": "",
      "out.o": "",
      "out.y": "",
      "wt/.git": "gitdir: /nowhere\n",
      "wt/b.o": "",
    });
    assert.deepEqual(await paths(list, ""), [".gitignore", "in/.gitignore", "in/a.o", "in/a.x", "out.y", "wt/b.o"]);
    assert.deepEqual(await paths(list, "in"), [".gitignore", "a.o", "a.x"]);
  });

  each("ignore-file lines are read as git reads them", "LF8", async (list, env) => {
    await files(env, {
      ".git/": "",
      ".gitignore":
        "\uFEFFbom\r\n# comment\n\n#hash\n\\#lit\n\\!bang\ntrail   \nesc\\ \n!\n  \n!not-ignored\nnot-ignored\n",
      bom: "",
      "#hash": "",
      "#lit": "",
      "!bang": "",
      trail: "",
      "trail  ": "",
      "esc ": "",
      esc: "",
      "not-ignored": "",
    });
    assert.deepEqual(await paths(list, ""), ["#hash", ".gitignore", "esc", "trail  "]);
  });

  each("patterns match as git's wildmatch", "LF9", async (list, env) => {
    await files(env, {
      ".gitignore": "/a/anchored\nmid/dle\n*.tmp\nq?\n[xy]z\n[!0-9]9\n**/deep\nall/**\nx/**/y\ndironly/\nCase\n",
      "a/anchored": "",
      "b/a/anchored": "",
      "mid/dle": "",
      "s/mid/dle": "",
      "t/1.tmp": "",
      q1: "",
      q12: "",
      xz: "",
      wz: "",
      a9: "",
      "19": "",
      "p/q/deep": "",
      "all/in/side": "",
      "x/y": "",
      "x/1/2/y": "",
      "dironly/f": "",
      "f/dironly": "",
      case: "",
    });
    assert.deepEqual(
      (await paths(list, "")).filter((path) => path !== ".gitignore"),
      byteOrder(["19", "b/a/anchored", "case", "f/dironly", "q12", "s/mid/dle", "wz"]),
    );
  });

  each("an excluded directory cannot be re-included", "LF10", async (list, env) => {
    await files(env, { ".gitignore": "build/\n!build/keep.txt\n/out/*\n!/out/kept\n", "build/keep.txt": "" });
    await files(env, ["out/dropped", "out/kept/file", "src/build/x"]);
    assert.deepEqual(await paths(list, ""), [".gitignore", "out/kept/file"]);
  });

  if (setup.symlinks) {
    each("links are listed, never followed; dir-only patterns miss them", "LF11 LF9", async (list, env) => {
      await files(env, { "real/x": "", ".gitignore": "lnk/\nreal/\n" });
      await script(setup, env, "ln -s real lnk && ln -s gone dangling && ln -s real/x fl");
      assert.deepEqual(await paths(list, ""), [".gitignore", "dangling", "fl", "lnk"]);
    });
  }

  if (setup.fifos) {
    each("FIFOs are left out", "LF11", async (list, env) => {
      await files(env, ["plain"]);
      await script(setup, env, "mkfifo pipe");
      assert.deepEqual(await paths(list, ""), ["plain"]);
    });
  }

  each("paths are in byte order with / separators", "LF12", async (list, env) => {
    const names = ["B", "a.txt", "a/b", "a0", "a/c/d", "é", "😀", "～", "_x", "a b/c", "#x", "!y"];
    await files(env, names);
    assert.deepEqual(await paths(list, ""), byteOrder(names));
  });

  if (setup.nonUtf8Names) {
    each("names that are not UTF-8 are decoded with U+FFFD, sorted by raw bytes", "LF12", async (list, env) => {
      await script(setup, env, "mkdir d && printf x > \"$(printf 'd/a\\377b')\" && printf y > d/a~");
      assert.deepEqual(await paths(list, "d"), ["a~", "a\uFFFDb"]);
    });
  }

  each("limit returns the first paths and says truncated", "LF13", async (list, env) => {
    const names = Array.from({ length: 30 }, (_, i) => `d${i % 4}/f${String(i).padStart(2, "0")}`);
    await files(env, names);
    const all = byteOrder(names);
    for (const limit of [1, 7, 29, 30, 31]) {
      for (let round = 0; round < 2; round++) {
        const result = value(await list("", { limit }, live), `limit ${limit}`);
        assert.deepEqual(result.paths, all.slice(0, limit), `limit ${limit}`);
        assert.equal(result.truncated, limit < 30, `truncated at ${limit}`);
      }
    }
  });

  each(
    "pages reach onPage in order and the result's paths is empty",
    "LF14 LF18",
    async (list, env) => {
      await script(setup, env, "mkdir many && cd many && i=0; while [ $i -lt 5000 ]; do : > f$i; i=$((i+1)); done");
      const all = value(await list("many", undefined, live), "whole").paths;
      assert.equal(all.length, 5000);
      const pages: string[][] = [];
      const result = value(await list("many", { onPage: (page) => pages.push(page) }, live), "paged");
      assert.deepEqual(result, { paths: [], truncated: false });
      assert.ok(pages.length >= 2, `${pages.length} pages`);
      assert.ok(
        pages.every((page) => page.length > 0 && page.length <= 4096),
        "page sizes",
      );
      assert.deepEqual(pages.flat(), all);
      const limited: string[][] = [];
      const cut = value(await list("many", { limit: 4100, onPage: (page) => limited.push(page) }, live), "limit");
      assert.deepEqual(cut, { paths: [], truncated: true });
      assert.deepEqual(limited.flat(), all.slice(0, 4100));
    },
    60_000,
  );

  each(
    "a throwing onPage fails unknown and is not called again",
    "LF14",
    async (list, env) => {
      await script(setup, env, "mkdir many && cd many && i=0; while [ $i -lt 9000 ]; do : > f$i; i=$((i+1)); done");
      let calls = 0;
      const error = fails(
        await list(
          "many",
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

  define(
    "listFiles: an unreadable subdirectory is skipped",
    "LF15",
    async (env) => {
      const list = listing(env);
      await files(env, ["open/a", "closed/b"]);
      await script(setup, env, "chmod 000 closed");
      try {
        assert.deepEqual(await paths(list, ""), ["open/a"]);
      } finally {
        await script(setup, env, `chmod 755 ${quote("closed")}`);
      }
    },
    { skip, permissions: true },
  );

  each("aborts at entry and between pages with the root's path", "LF16", async (list, env) => {
    fails(await list("", undefined, aborted()), "aborted", "at entry", env.cwd);
    fails(await list("missing", undefined, aborted()), "aborted", "before the root is looked at", at(env, "missing"));
    await script(setup, env, "mkdir many && cd many && i=0; while [ $i -lt 9000 ]; do : > f$i; i=$((i+1)); done");
    const { context, controller } = abortable();
    let calls = 0;
    const result = await list(
      "many",
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
