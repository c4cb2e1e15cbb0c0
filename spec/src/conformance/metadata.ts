/** fileInfo and exists. */
import { aborted, assert, at, belowFile, fails, live, put, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** Registers the metadata cases. */
export function metadataCases(setup: Setup, define: Define): void {
  define("fileInfo describes files and directories without following anything", "M1 I1 I2 I3 I4 I5", async (env) => {
    const before = Date.now();
    await put(env, "f.txt", "héllo");
    const info = value(await env.fileInfo("f.txt", live), "file");
    assert.deepEqual(
      { ...info, mtimeMs: 0 },
      { name: "f.txt", path: at(env, "f.txt"), kind: "file", size: 6, mtimeMs: 0 },
    );
    assert.ok(Math.abs(info.mtimeMs - before) < 60_000, `mtimeMs is in milliseconds: ${info.mtimeMs}`);
    const mtime = Number((await script(setup, env, "stat -c %.9Y f.txt")).trim()) * 1000;
    if (setup.linux)
      assert.ok(Math.abs(info.mtimeMs - mtime) < 0.01, `mtimeMs keeps fractions: ${info.mtimeMs} vs ${mtime}`);
    value(await env.createDir("dir", undefined, live), "createDir");
    const dir = value(await env.fileInfo("dir", live), "dir");
    assert.equal(dir.kind, "directory");
    assert.equal(dir.name, "dir");
    const root = value(await env.fileInfo("/", live), "/");
    assert.equal(root.name, "", "the root has an empty name");
    assert.equal(root.path, "/");
    assert.equal(root.kind, "directory");
    const cwd = value(await env.fileInfo("", live), "empty path");
    assert.equal(cwd.path, env.cwd);
  });

  define("fileInfo fails not_found, not_directory and aborted with the resolved path", "M1 E2 A3", async (env) => {
    await put(env, "f.txt", "x");
    fails(await env.fileInfo("missing", live), "not_found", "missing", at(env, "missing"));
    fails(await env.fileInfo("f.txt/x", live), belowFile(setup), "under a file", at(env, "f.txt/x"));
    fails(await env.fileInfo("f.txt", aborted()), "aborted", "aborted", at(env, "f.txt"));
  });

  if (setup.symlinks) {
    define("fileInfo reports symlinks as symlinks with the target's length as size", "M1 M2 I1 I4 P7", async (env) => {
      value(await env.createDir("dir", undefined, live), "createDir");
      await script(setup, env, "ln -s dir dirlink && ln -s no/where dangling");
      const link = value(await env.fileInfo("dirlink", live), "dirlink");
      assert.deepEqual([link.kind, link.size, link.name], ["symlink", 3, "dirlink"]);
      const dangling = value(await env.fileInfo("dangling", live), "dangling");
      assert.deepEqual([dangling.kind, dangling.size], ["symlink", 8]);
      assert.equal(value(await env.exists("dangling", live), "exists dangling"), true, "a broken symlink exists");
      const below = value(await env.fileInfo("dirlink/", live), "dirlink/");
      assert.equal(below.kind, "symlink", "a trailing slash is dropped before lstat");
    });
  }

  define("exists returns false only for not_found and returns every other failure", "M2 A3", async (env) => {
    await put(env, "f.txt", "x");
    assert.equal(value(await env.exists("f.txt", live), "file"), true);
    assert.equal(value(await env.exists("", live), "cwd"), true);
    assert.equal(value(await env.exists("missing", live), "missing"), false);
    assert.equal(value(await env.exists("missing/deeper", live), "missing/deeper"), false);
    if (setup.windows) assert.equal(value(await env.exists("f.txt/x", live), "under a file"), false, "WIN2: not_found");
    else fails(await env.exists("f.txt/x", live), "not_directory", "under a file", at(env, "f.txt/x"));
    fails(await env.exists("f.txt", aborted()), "aborted", "aborted", at(env, "f.txt"));
    fails(await env.exists("missing", aborted()), "aborted", "aborted missing", at(env, "missing"));
  });
}
