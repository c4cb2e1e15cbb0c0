/** Writing: writeFile, appendFile, truncateFile, flushFile, renameFile. */
import {
  assert,
  at,
  belowFile,
  bytes,
  fails,
  fileInTheWay,
  hex,
  live,
  present,
  put,
  script,
  text,
  value,
} from "./support.js";
import type { Define, Setup } from "./types.js";

/** Registers the writing cases. */
export function writeCases(setup: Setup, define: Define): void {
  define(
    "writeFile encodes strings as UTF-8, lone surrogates as U+FFFD, and writes bytes as given",
    "W1 W8",
    async (env) => {
      await put(env, "s.txt", "a\uD800b\uDFFFc é😀");
      assert.equal(hex(await bytes(env, "s.txt")), `61efbfbd62efbfbd6320${Buffer.from("é😀").toString("hex")}`);
      await put(env, "b.bin", new Uint8Array([0, 0xff, 0xfe, 0x0a]));
      assert.equal(hex(await bytes(env, "b.bin")), "00fffe0a");
      await put(env, "b.bin", "z");
      assert.equal(hex(await bytes(env, "b.bin")), "7a", "writeFile truncates what was there");
      await put(env, "b.bin", "");
      assert.equal((await bytes(env, "b.bin")).length, 0, "empty content truncates");
      await put(env, "new-empty.txt", new Uint8Array(0));
      assert.equal(
        value(await env.fileInfo("new-empty.txt", live), "fileInfo").size,
        0,
        "empty content creates the file",
      );
    },
  );

  define("writeFile and appendFile create missing parents", "W1 W2 W3 P7", async (env) => {
    await put(env, "a/b/c/f.txt", "x");
    assert.equal(await text(env, "a/b/c/f.txt"), "x");
    value(await env.appendFile("p/q/g.txt", "y", live), "appendFile");
    assert.equal(await text(env, "p/q/g.txt"), "y");
    await put(env, "x/", "file named x");
    assert.equal(value(await env.fileInfo("x", live), "x").kind, "file");
  });

  define("writeFile reports the parent path when creating parents fails", "W2 E2 E5 W1 W3", async (env) => {
    await put(env, "f.txt", "x");
    fails(await env.writeFile("f.txt/g.txt", "y", live), "unknown", "parent is a file", at(env, "f.txt"));
    const further = fileInTheWay(setup, env, "f.txt", "f.txt/a");
    fails(await env.writeFile("f.txt/a/g.txt", "y", live), "not_directory", "a file further up", further);
    fails(await env.appendFile("f.txt/g.txt", "y", live), "unknown", "append: parent is a file", at(env, "f.txt"));
    fails(
      await env.appendFile("f.txt/a/b/g.txt", "y", live),
      "not_directory",
      "append: file further up",
      fileInTheWay(setup, env, "f.txt", "f.txt/a/b"),
    );
    value(await env.createDir("dir", undefined, live), "createDir");
    fails(await env.writeFile("dir", "y", live), "is_directory", "target is a directory", at(env, "dir"));
    fails(await env.appendFile("dir", "y", live), "is_directory", "append target is a directory", at(env, "dir"));
  });

  if (setup.symlinks) {
    define("writeFile and appendFile under a dangling symlink fail like Node's mkdir", "W2 E5", async (env) => {
      await script(setup, env, "ln -s nowhere dangling");
      fails(await env.writeFile("dangling/y.txt", "y", live), "not_found", "writeFile", at(env, "dangling"));
      fails(await env.appendFile("dangling/y/z.txt", "y", live), "not_directory", "appendFile", at(env, "dangling"));
      fails(
        await env.writeFile("dangling/y/z.txt", "y", live),
        "not_directory",
        "writeFile deeper",
        at(env, "dangling"),
      );
      await put(env, "dangling", "through the link");
      assert.equal(await text(env, "nowhere"), "through the link", "writeFile follows a final symlink");
    });
  }

  define("appendFile appends strings and bytes, creating the file", "W3", async (env) => {
    value(await env.appendFile("f.txt", "one", live), "append 1");
    value(await env.appendFile("f.txt", new Uint8Array([0x0a, 0xff]), live), "append 2");
    value(await env.appendFile("f.txt", "", live), "append empty");
    assert.equal(hex(await bytes(env, "f.txt")), "6f6e650aff");
    value(await env.appendFile("empty.txt", "", live), "append empty creates");
    assert.equal(await present(env, "empty.txt"), true);
  });

  define("truncateFile shrinks, extends with zeros and validates the size", "W4", async (env) => {
    await put(env, "f.txt", "héllo");
    value(await env.truncateFile("f.txt", 2, live), "shrink");
    assert.equal(hex(await bytes(env, "f.txt")), "68c3", "byte exact, splitting a character");
    value(await env.truncateFile("f.txt", 5, live), "extend");
    assert.equal(hex(await bytes(env, "f.txt")), "68c3000000");
    value(await env.truncateFile("f.txt", -0, live), "-0");
    assert.equal((await bytes(env, "f.txt")).length, 0);
    await put(env, "g.txt", "keep");
    for (const size of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      fails(await env.truncateFile("g.txt", size, live), "invalid", `size ${size}`, at(env, "g.txt"));
      fails(
        await env.truncateFile("missing", size, live),
        "invalid",
        `validated before opening: ${size}`,
        at(env, "missing"),
      );
    }
    assert.equal(await text(env, "g.txt"), "keep");
    fails(await env.truncateFile("missing", 0, live), "not_found", "missing", at(env, "missing"));
    assert.equal(await present(env, "missing"), false, "truncateFile never creates");
    value(await env.createDir("dir", undefined, live), "createDir");
    // Windows opens a directory "r+", so the truncate itself fails (WIN5).
    const directoryCode = setup.windows ? "invalid" : "is_directory";
    fails(await env.truncateFile("dir", 0, live), directoryCode, "directory", at(env, "dir"));
    fails(await env.truncateFile("g.txt/x", 0, live), belowFile(setup), "under a file", at(env, "g.txt/x"));
  });

  define("flushFile flushes files and refuses missing paths and directories", "W5", async (env) => {
    await put(env, "f.txt", "x");
    value(await env.flushFile("f.txt", live), "flush");
    fails(await env.flushFile("missing", live), "not_found", "missing", at(env, "missing"));
    assert.equal(await present(env, "missing"), false);
    value(await env.createDir("dir", undefined, live), "createDir");
    fails(await env.flushFile("dir", live), "is_directory", "directory", at(env, "dir"));
  });

  define("renameFile replaces files, keeps hard links and reports the source path", "W6 E5", async (env) => {
    await put(env, "a.txt", "a");
    await put(env, "b.txt", "b");
    value(await env.renameFile("a.txt", "b.txt", live), "over a file");
    assert.equal(await text(env, "b.txt"), "a");
    assert.equal(await present(env, "a.txt"), false);
    await script(setup, env, "ln b.txt hard.txt");
    value(await env.renameFile("b.txt", "hard.txt", live), "onto a hard link of itself");
    assert.equal(await present(env, "b.txt"), true, "both names remain");
    assert.equal(await present(env, "hard.txt"), true, "both names remain");
    fails(await env.renameFile("missing", "b.txt", live), "not_found", "missing source", at(env, "missing"));
    assert.equal(await text(env, "b.txt"), "a", "destination untouched");
    fails(await env.renameFile("b.txt", "no/dir/x", live), "not_found", "no parent creation", at(env, "b.txt"));
    value(await env.createDir("dir", undefined, live), "createDir");
    await put(env, "full/x", "x");
    fails(await env.renameFile("b.txt", "dir", live), "is_directory", "file over dir", at(env, "b.txt"));
    fails(await env.renameFile("dir", "b.txt", live), "not_directory", "dir over file", at(env, "dir"));
    fails(await env.renameFile("dir", "full", live), "unknown", "dir over non-empty dir", at(env, "dir"));
    value(await env.createDir("empty", undefined, live), "createDir");
    value(await env.renameFile("dir", "empty", live), "dir over empty dir");
    assert.equal(await present(env, "dir"), false);
  });
}
