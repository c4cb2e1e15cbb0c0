/** Path resolution: `~`, `file://` URLs, relative paths, `..`, trailing slashes, the empty path, NUL bytes. */
import { posix } from "node:path";
import { aborted, assert, at, fails, live, present, put, run, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** Registers the path-resolution cases. */
export function pathCases(setup: Setup, define: Define): void {
  define("absolutePath expands ~ and ~/ to the home directory, but not ~user", "P2 P3 P13", async (env) => {
    const home = (await script(setup, env, 'printf %s "$HOME"')).trim();
    assert.ok(home.startsWith("/"), `HOME of the target is absolute: ${home}`);
    assert.equal(value(await env.absolutePath("~", live), "~"), posix.resolve(home));
    assert.equal(value(await env.absolutePath("~/x/../y", live), "~/x"), posix.join(home, "y"));
    assert.equal(value(await env.absolutePath("~/", live), "~/"), posix.resolve(home));
    assert.equal(value(await env.absolutePath("~user", live), "~user"), at(env, "~user"));
    assert.equal(value(await env.absolutePath("~foo/x", live), "~foo/x"), at(env, "~foo/x"));
  });

  define("absolutePath turns file:// URLs into paths like Node's fileURLToPath", "P4", async (env) => {
    const cases: [string, string][] = [
      ["file:///tmp/a%20b", "/tmp/a b"],
      ["file:///caf%C3%A9/x", "/café/x"],
      ["file://localhost/x", "/x"],
      ["file:///tmp/q?x=1#f", "/tmp/q"],
      ["file://", "/"],
      ["file:///", "/"],
      ["file:///a/./b/../c/", "/a/c"],
    ];
    for (const [url, expected] of cases) {
      assert.equal(value(await env.absolutePath(url, live), url), expected, url);
    }
  });

  define("absolutePath keeps file:// URLs Node refuses as relative names", "P4 ND3", async (env) => {
    const kept: [string, string][] = [
      ["file://host/x", "file:/host/x"],
      ["file:///a%2Fb", "file:/a%2Fb"],
      ["file:///a%2fb", "file:/a%2fb"],
      ["file:///%E2%82", "file:/%E2%82"],
      ["FILE:///x", "FILE:/x"],
    ];
    for (const [url, relative] of kept) {
      assert.equal(value(await env.absolutePath(url, live), url), at(env, relative), url);
    }
  });

  define(
    "absolutePath resolves relative paths, .., trailing slashes and the empty path textually",
    "P1 P5 P6 P13",
    async (env) => {
      const cases: [string, string][] = [
        ["a/b", at(env, "a/b")],
        ["a/", at(env, "a")],
        ["./a//b/./", at(env, "a/b")],
        ["", env.cwd],
        [".", env.cwd],
        ["..", posix.dirname(env.cwd)],
        ["a/../../b", posix.join(posix.dirname(env.cwd), "b")],
        ["/a/../../b", "/b"],
        ["//x//y/", "/x/y"],
        ["/", "/"],
      ];
      for (const [path, expected] of cases) {
        assert.equal(value(await env.absolutePath(path, live), JSON.stringify(path)), expected, JSON.stringify(path));
      }
    },
  );

  define("absolutePath and joinPath never check the abort signal", "P13 P14 A3", async (env) => {
    assert.equal(value(await env.absolutePath("a", aborted()), "absolutePath"), at(env, "a"));
    assert.equal(value(await env.joinPath(["a", "b"], aborted()), "joinPath"), setup.windows ? "a\\b" : "a/b");
  });

  define("joinPath joins like Node's path.join, without the cwd", "P14", async (env) => {
    const cases: [string[], string][] = [
      [[], "."],
      [[""], "."],
      [["a/", "b/"], "a/b/"],
      [["/a", "../../b"], "/b"],
      [["a", "", "b"], "a/b"],
      [["a", ".."], "."],
      [["~", "x"], "~/x"],
      [["file:///x", "y"], "file:/x/y"],
    ];
    for (const [parts, expected] of cases) {
      assert.equal(value(await env.joinPath(parts, live), JSON.stringify(parts)), expected, JSON.stringify(parts));
    }
  });

  define(
    "paths are resolved before any access: .. applies to the text, trailing slashes are dropped",
    "P1 P7 P8",
    async (env) => {
      value(await env.createDir("ghost/../real", undefined, live), "createDir ghost/../real");
      assert.equal(await present(env, "real"), true, "real created");
      assert.equal(await present(env, "ghost"), false, "ghost never created");
      await put(env, "f.txt", "abc");
      const info = value(await env.fileInfo("f.txt/", live), "fileInfo f.txt/");
      assert.equal(info.path, at(env, "f.txt"));
      assert.equal(info.kind, "file");
      assert.equal(await present(env, "f.txt/"), true, "exists f.txt/");
      value(await env.renameFile("f.txt/", "g.txt/", live), "renameFile f.txt/ g.txt/");
      assert.equal(await present(env, "g.txt"), true, "g.txt after rename");
      value(await env.writeFile("x/", "data", live), "writeFile x/");
      const x = value(await env.fileInfo("x", live), "fileInfo x");
      assert.equal(x.kind, "file", "writeFile x/ creates a file named x");
    },
  );

  define("a NUL byte in a path fails with unknown", "P10 ND2", async (env) => {
    fails(await env.fileInfo("a\0b", live), "unknown", "fileInfo");
    fails(await env.readTextFile("a\0b", live), "unknown", "readTextFile");
    fails(await env.writeFile("a\0b", "x", live), "unknown", "writeFile");
    fails(await env.createDir("a\0b", undefined, live), "unknown", "createDir");
    fails(await env.exists("a\0b", live), "unknown", "exists");
    fails(await env.readBinaryFile("a\0b", live), "unknown", "readBinaryFile");
    fails(await env.appendFile("a\0b", "x", live), "unknown", "appendFile");
    fails(await env.truncateFile("a\0b", 0, live), "unknown", "truncateFile", at(env, "a\0b"));
    fails(await env.flushFile("a\0b", live), "unknown", "flushFile");
    fails(await env.listDir("a\0b", live), "unknown", "listDir");
    fails(await env.canonicalPath("a\0b", live), "unknown", "canonicalPath");
    fails(await env.remove("a\0b", undefined, live), "unknown", "remove");
    await put(env, "plain.txt", "p");
    // Either side of a rename: the failure names the source, as Node's does.
    fails(await env.renameFile("a\0b", "plain2.txt", live), "unknown", "rename from", at(env, "a\0b"));
    fails(await env.renameFile("plain.txt", "a\0b", live), "unknown", "rename to", at(env, "plain.txt"));
    value(await env.remove("plain.txt", undefined, live), "remove plain.txt");
    assert.equal(value(await env.listDir("", live), "listDir").length, 0, "nothing was created");
  });

  define("env.cwd is used as assigned, at call time", "P6 P9", async (env) => {
    const root = env.cwd;
    value(await env.createDir("sub", undefined, live), "createDir sub");
    await put(env, "sub/in.txt", "inner");
    env.cwd = `${root}/sub/`;
    try {
      assert.equal(env.cwd, `${root}/sub/`, "cwd is kept exactly as assigned");
      assert.equal(value(await env.readTextFile("in.txt", live), "read relative to the new cwd"), "inner");
      assert.equal(value(await env.absolutePath("in.txt", live), "absolutePath"), `${root}/sub/in.txt`);
      const pwd = await run(env, ["pwd", "-P"]);
      const physical = (await script(setup, env, "pwd -P", { cwd: root })).trim();
      assert.equal(pwd.stdout.trim(), `${physical}/sub`, "exec runs in the new cwd");
    } finally {
      env.cwd = root;
    }
  });

  define("a relative cwd resolves against the host process's working directory", "P6 P9", async (env) => {
    const root = env.cwd;
    env.cwd = ".";
    try {
      const pwd = await run(env, ["pwd", "-P"]);
      value(pwd.result, "pwd");
      const base = pwd.stdout.trim();
      assert.equal(value(await env.absolutePath("x", live), "absolutePath x"), posix.join(base, "x"));
      assert.equal(value(await env.absolutePath("", live), "absolutePath empty"), base);
    } finally {
      env.cwd = root;
    }
  });

  define("a missing cwd is created by writeFile of a relative path", "P9 W2", async (env) => {
    const root = env.cwd;
    env.cwd = `${root}/missing/deeper`;
    try {
      value(await env.writeFile("f.txt", "x", live), "writeFile under a missing cwd");
      assert.equal(value(await env.readTextFile("f.txt", live), "readTextFile"), "x");
    } finally {
      env.cwd = root;
    }
    assert.equal(await present(env, "missing/deeper/f.txt"), true);
  });

  if (setup.symlinks) {
    define(
      "canonicalPath resolves links after .. was applied to the text, and fails on loops",
      "P8 M3",
      async (env) => {
        value(await env.createDir("deep/er", undefined, live), "createDir");
        await put(env, "deep/er/t.txt", "t");
        await script(setup, env, "ln -s deep/er l && ln -s loop1 loop2 && ln -s loop2 loop1 && ln -s deep/er/t.txt tl");
        const physical = (await script(setup, env, "pwd -P")).trim();
        assert.equal(value(await env.canonicalPath("l/..", live), "l/.."), physical, "l/.. is the cwd, not deep");
        assert.equal(value(await env.canonicalPath("tl", live), "tl"), posix.join(physical, "deep/er/t.txt"));
        assert.equal(value(await env.canonicalPath("l", live), "l"), posix.join(physical, "deep/er"));
        fails(await env.canonicalPath("loop1", live), "unknown", "symlink loop", at(env, "loop1"));
        fails(await env.canonicalPath("missing", live), "not_found", "missing", at(env, "missing"));
        fails(await env.canonicalPath("tl", aborted()), "aborted", "aborted", at(env, "tl"));
      },
    );
  }
}
