/**
 * The abort-checkpoint table. An already-aborted context must fail at the first checkpoint with the right path
 * and no side effect; an abort that lands while a call runs must leave the side effects of one checkpoint.
 */
import type { FileError, Result } from "@outpost/sdk";
import { abortable, aborted, assert, at, bytes, execFails, fails, live, present, put, text, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** Registers the abort cases. */
export function abortCases(_setup: Setup, define: Define): void {
  define("an aborted context stops every file method before any side effect", "A1 A3 T2 T3 X2", async (env) => {
    await put(env, "f.txt", "keep");
    value(await env.createDir("dir", undefined, live), "createDir");
    const ctx = aborted();
    fails(await env.writeFile("new/a.txt", "x", ctx), "aborted", "writeFile", at(env, "new/a.txt"));
    fails(await env.writeFile("f.txt", "x", ctx), "aborted", "writeFile existing", at(env, "f.txt"));
    fails(await env.appendFile("new/b.txt", "x", ctx), "aborted", "appendFile", at(env, "new/b.txt"));
    fails(await env.appendFile("f.txt", "x", ctx), "aborted", "appendFile existing", at(env, "f.txt"));
    assert.equal(await present(env, "new"), false, "no parent was created");
    fails(await env.truncateFile("f.txt", 0, ctx), "aborted", "truncateFile", at(env, "f.txt"));
    fails(
      await env.truncateFile("f.txt", -1, ctx),
      "aborted",
      "truncateFile checks abort before the size",
      at(env, "f.txt"),
    );
    fails(await env.flushFile("f.txt", ctx), "aborted", "flushFile", at(env, "f.txt"));
    fails(await env.flushFile("missing", ctx), "aborted", "flushFile missing", at(env, "missing"));
    assert.equal(await text(env, "f.txt"), "keep", "content untouched");
    fails(
      await env.renameFile("f.txt", "g.txt", ctx),
      "aborted",
      "renameFile reports the destination",
      at(env, "g.txt"),
    );
    fails(await env.renameFile("missing", "g.txt", ctx), "aborted", "renameFile of a missing source", at(env, "g.txt"));
    assert.equal(await present(env, "f.txt"), true, "not renamed");
    fails(await env.createDir("made", undefined, ctx), "aborted", "createDir", at(env, "made"));
    assert.equal(await present(env, "made"), false);
    fails(await env.remove("f.txt", undefined, ctx), "aborted", "remove", at(env, "f.txt"));
    fails(
      await env.remove("dir", { recursive: true, force: true }, ctx),
      "aborted",
      "remove recursive",
      at(env, "dir"),
    );
    fails(await env.remove("missing", { force: true }, ctx), "aborted", "remove forced missing", at(env, "missing"));
    assert.equal(await present(env, "dir"), true);
    fails(await env.fileInfo("missing", ctx), "aborted", "fileInfo missing", at(env, "missing"));
    fails(await env.canonicalPath("missing", ctx), "aborted", "canonicalPath", at(env, "missing"));
    fails(await env.listDir("missing", ctx), "aborted", "listDir missing", at(env, "missing"));
    fails(await env.openDirReader("missing", ctx), "aborted", "openDirReader missing", at(env, "missing"));
    fails(await env.openTextLineReader("missing", ctx), "aborted", "openTextLineReader missing", at(env, "missing"));
    fails(
      await env.openBinaryReader("missing", undefined, ctx),
      "aborted",
      "openBinaryReader missing",
      at(env, "missing"),
    );
    fails(await env.readTextFile("missing", ctx), "aborted", "readTextFile missing", at(env, "missing"));
    fails(await env.readBinaryFile("dir", ctx), "aborted", "readBinaryFile dir", at(env, "dir"));
    fails(await env.readTextLines("missing", { maxLines: 3 }, ctx), "aborted", "readTextLines", at(env, "missing"));
    fails(await env.createTempDir("x-", ctx), "aborted", "createTempDir", { none: true });
    fails(await env.createTempFile(undefined, ctx), "aborted", "createTempFile", { none: true });
    for (const result of <Result<unknown, FileError>[]>[
      await env.fileInfo("f.txt", ctx),
      await env.readTextFile("f.txt", ctx),
      await env.writeFile("f.txt", "", ctx),
    ]) {
      assert.equal(fails(result, "aborted", "message").message, "aborted", "an entry checkpoint's message");
    }
    assert.deepEqual(
      value(await env.listDir("", live), "listDir").map((entry) => entry.name),
      ["dir", "f.txt"],
      "nothing else appeared",
    );
  });

  define("reader methods check abort first; close never does", "A3 A4 R15", async (env) => {
    await put(env, "f.txt", "a\nb");
    value(await env.createDir("d", undefined, live), "createDir");
    const binary = value(await env.openBinaryReader("f.txt", undefined, live), "binary");
    const lines = value(await env.openTextLineReader("f.txt", live), "lines");
    const dir = value(await env.openDirReader("d", live), "dir");
    const ctx = aborted();
    fails(await binary.info(ctx), "aborted", "info", at(env, "f.txt"));
    fails(await binary.read(0, 1, ctx), "aborted", "read", at(env, "f.txt"));
    fails(
      await binary.scanLines({ startLine: 2, endLine: 2 }, ctx),
      "aborted",
      "scanLines before validation",
      at(env, "f.txt"),
    );
    fails(await lines.readLine(ctx), "aborted", "readLine", at(env, "f.txt"));
    fails(await dir.next(0, ctx), "aborted", "next before validation", at(env, "d"));
    await binary.close(ctx);
    await lines.close(ctx);
    await dir.close(ctx);
    fails(await binary.read(0, 1, live), "invalid", "closed by an aborted close", at(env, "f.txt"));
    fails(await lines.readLine(live), "invalid", "closed by an aborted close", at(env, "f.txt"));
    fails(await dir.next(1, live), "invalid", "closed by an aborted close", at(env, "d"));
  });

  define("cleanup never fails, even with an aborted context", "A3 C1", async (env) => {
    await env.cleanup(aborted());
    await env.cleanup(live);
    assert.equal(value(await env.exists("", live), "env still usable"), true);
  });

  define("exec with an aborted context fails aborted before validating or spawning anything", "X1 X2", async (env) => {
    execFails(await env.exec(["touch", "spawned"], undefined, aborted()), "aborted", "argv", "aborted");
    execFails(
      await env.exec("touch spawned", { timeout: -1 }, aborted()),
      "aborted",
      "before timeout validation",
      "aborted",
    );
    execFails(await env.exec([], undefined, aborted()), "aborted", "before argv validation", "aborted");
    assert.equal(await present(env, "spawned"), false);
  });

  define("an abort during appendFile leaves nothing, the parent, or the whole append", "A3 A5 A6 W3", async (env) => {
    const data = Buffer.alloc(3 * 1024 * 1024, 0x61);
    for (let attempt = 0; attempt < 3; attempt++) {
      const name = `p${attempt}/f.txt`;
      const { context, controller } = abortable();
      const pending = env.appendFile(name, data, context);
      controller.abort();
      fails(await pending, "aborted", "appendFile", at(env, name));
      const parent = await present(env, `p${attempt}`);
      const file = await present(env, name);
      if (file) {
        assert.ok(parent, "a file implies its parent");
        assert.equal((await bytes(env, name)).length, data.length, "never a partial append");
      }
    }
  });

  define(
    "an abort during writeFile leaves the file absent, empty or a prefix of the content",
    "A2 A3 A6 W1",
    async (env) => {
      const data = Buffer.alloc(4 * 1024 * 1024, 0x62);
      await put(env, "w.txt", "old content");
      const { context, controller } = abortable();
      const pending = env.writeFile("w.txt", data, context);
      controller.abort();
      const result = await pending;
      const now = await bytes(env, "w.txt");
      if (result.ok) assert.equal(now.length, data.length, "a successful write is complete");
      else {
        fails(result, "aborted", "writeFile", at(env, "w.txt"));
        const old = Buffer.from(now).toString() === "old content";
        assert.ok(old || now.every((byte) => byte === 0x62), "either untouched or a prefix of the new content");
        assert.ok(now.length % (512 * 1024) === 0 || old, `whole 512 KiB chunks only: ${now.length}`);
      }
    },
  );

  define("an abort during renameFile either renames (success) or does nothing (aborted)", "A3 A5 W6", async (env) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      await put(env, `s${attempt}`, "x");
      const { context, controller } = abortable();
      const pending = env.renameFile(`s${attempt}`, `d${attempt}`, context);
      controller.abort();
      const result = await pending;
      const moved = await present(env, `d${attempt}`);
      if (result.ok) assert.ok(moved, "success means renamed");
      else {
        fails(result, "aborted", "renameFile", at(env, `d${attempt}`));
        assert.ok(!moved && (await present(env, `s${attempt}`)), "aborted means untouched");
      }
    }
  });

  define(
    "an abort during truncateFile reports aborted whether or not the file was truncated",
    "A3 A5 A6 W4",
    async (env) => {
      for (let attempt = 0; attempt < 3; attempt++) {
        await put(env, "t.txt", "0123456789");
        const { context, controller } = abortable();
        const pending = env.truncateFile("t.txt", 4, context);
        controller.abort();
        fails(await pending, "aborted", "truncateFile", at(env, "t.txt"));
        const now = await text(env, "t.txt");
        assert.ok(now === "0123" || now === "0123456789", `truncated or untouched: ${now}`);
      }
    },
  );
}
