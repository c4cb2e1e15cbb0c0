/** listDir, createDir and remove. */
import { aborted, assert, at, fails, fileInTheWay, live, present, put, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** Registers the directory cases. */
export function dirCases(setup: Setup, define: Define): void {
  define("listDir lists names in byte order with their metadata", "D1 D2 D9 I1 I2 I3 I4", async (env) => {
    const order = ["C", "Z", "_x", "a", "a2", "b", "é", "😀", "～"];
    for (const name of [...order].reverse()) await put(env, `d/${name}`, name);
    value(await env.createDir("d/sub", undefined, live), "createDir");
    const entries = value(await env.listDir("d", live), "listDir");
    const expected = [...order, "sub"].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(
      entries.map((entry) => entry.name),
      expected,
    );
    for (const entry of entries) {
      assert.equal(entry.path, at(env, "d", entry.name));
      assert.equal(entry.kind, entry.name === "sub" ? "directory" : "file");
      if (entry.kind === "file") assert.equal(entry.size, Buffer.byteLength(entry.name));
    }
    assert.deepEqual(value(await env.listDir("d/sub", live), "empty"), []);
  });

  define(
    "listDir fails not_found, not_directory and aborted with the directory's path",
    "D1 D9 E2 E4 A3",
    async (env) => {
      await put(env, "f.txt", "x");
      fails(await env.listDir("missing", live), "not_found", "missing", at(env, "missing"));
      fails(await env.listDir("f.txt", live), "not_directory", "file", at(env, "f.txt"));
      fails(await env.listDir("", aborted()), "aborted", "aborted", env.cwd);
    },
  );

  if (setup.symlinks) {
    define("listDir reports symlinks without following them", "D1 I1", async (env) => {
      value(await env.createDir("d/real", undefined, live), "createDir");
      await script(setup, env, "ln -s real d/link && ln -s gone d/dangling");
      const entries = value(await env.listDir("d", live), "listDir");
      assert.deepEqual(
        entries.map((entry) => [entry.name, entry.kind]),
        [
          ["dangling", "symlink"],
          ["link", "symlink"],
          ["real", "directory"],
        ],
      );
    });
  }

  define("createDir is recursive by default and fails on files in the way", "M4 E2 A3", async (env) => {
    value(await env.createDir("a/b/c", undefined, live), "recursive default");
    value(await env.createDir("a/b/c", undefined, live), "existing directory");
    value(await env.createDir("a/b/c", { recursive: true }, live), "existing, recursive");
    value(await env.createDir("a/b/c/", {}, live), "trailing slash");
    assert.equal(value(await env.fileInfo("a/b/c", live), "fileInfo").kind, "directory");
    await put(env, "f.txt", "x");
    fails(await env.createDir("f.txt", undefined, live), "unknown", "existing file", at(env, "f.txt"));
    const inTheWay = fileInTheWay(setup, env, "f.txt", "f.txt/x/y");
    fails(await env.createDir("f.txt/x/y", undefined, live), "not_directory", "file in the way", inTheWay);
    fails(
      await env.createDir("missing/x", { recursive: false }, live),
      "not_found",
      "non-recursive, missing parent",
      at(env, "missing/x"),
    );
    fails(await env.createDir("a", { recursive: false }, live), "unknown", "non-recursive, existing", at(env, "a"));
    value(await env.createDir("a/new", { recursive: false }, live), "non-recursive");
    fails(await env.createDir("z", undefined, aborted()), "aborted", "aborted", at(env, "z"));
    assert.equal(await present(env, "z"), false);
  });

  if (setup.symlinks) {
    define("createDir on a dangling symlink fails like Node's mkdir", "M4 E2", async (env) => {
      await script(setup, env, "ln -s nowhere dangling");
      fails(await env.createDir("dangling", undefined, live), "not_found", "recursive", at(env, "dangling"));
      fails(
        await env.createDir("dangling", { recursive: false }, live),
        "unknown",
        "non-recursive",
        at(env, "dangling"),
      );
      fails(await env.createDir("dangling/x", undefined, live), "not_directory", "below it", at(env, "dangling"));
    });
  }

  define("remove deletes files and directories as Node's rm does", "M5 E2 E7 A3", async (env) => {
    await put(env, "f.txt", "x");
    value(await env.remove("f.txt", undefined, live), "file");
    assert.equal(await present(env, "f.txt"), false);
    fails(await env.remove("f.txt", undefined, live), "not_found", "missing", at(env, "f.txt"));
    value(await env.remove("f.txt", { force: true }, live), "missing with force");
    await put(env, "g.txt", "x");
    if (setup.windows) {
      // Below a file is "path not found" on Windows (WIN2), which force ignores as it ignores any not_found.
      value(await env.remove("g.txt/x", { force: true }, live), "under a file, with force (WIN2)");
    } else {
      fails(
        await env.remove("g.txt/x", { force: true }, live),
        "not_directory",
        "under a file, even with force",
        at(env, "g.txt/x"),
      );
    }
    await put(env, "d/e/f.txt", "x");
    fails(await env.remove("d", undefined, live), "unknown", "directory without recursive", at(env, "d"));
    fails(await env.remove("d", { force: true }, live), "unknown", "directory with force only", at(env, "d"));
    value(await env.createDir("empty", undefined, live), "createDir");
    fails(await env.remove("empty", undefined, live), "unknown", "even an empty directory", at(env, "empty"));
    value(await env.remove("d", { recursive: true }, live), "recursive");
    assert.equal(await present(env, "d"), false);
    fails(await env.remove("g.txt", undefined, aborted()), "aborted", "aborted", at(env, "g.txt"));
    assert.equal(await present(env, "g.txt"), true);
  });

  if (setup.symlinks) {
    define("remove unlinks symlinks without following them, even with a trailing slash", "M5 P7", async (env) => {
      await put(env, "real/keep.txt", "x");
      await script(setup, env, "ln -s real link && ln -s real link2");
      value(await env.remove("link/", { recursive: true }, live), "link/ recursive");
      assert.equal(await present(env, "link"), false);
      assert.equal(await present(env, "real/keep.txt"), true, "the target's contents stay");
      value(await env.remove("link2", undefined, live), "link2");
      assert.equal(await present(env, "real/keep.txt"), true);
    });
  }

  define("remove of the empty path with recursive removes the cwd itself", "M5 P6", async (env) => {
    await put(env, "f.txt", "x");
    value(await env.remove("", { recursive: true }, live), "remove ''");
    assert.equal(await present(env, ""), false, "the cwd is gone");
    value(await env.createDir("", undefined, live), "recreate the cwd for cleanup");
  });
}
