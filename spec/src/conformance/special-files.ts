/** FIFOs, /dev/null, directories read as files, names that are not UTF-8, and files larger than every chunk. */
import { assert, at, bytes, fails, live, put, run, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** A pattern that differs at every position of a chunk, so misplaced chunks show. */
function pattern(size: number, seed: number): Buffer {
  const words = new Uint32Array(Math.ceil(size / 4));
  let state = seed >>> 0;
  for (let i = 0; i < words.length; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    words[i] = state;
  }
  return Buffer.from(words.buffer, 0, size);
}

/** Registers the special-file cases. */
export function specialFileCases(setup: Setup, define: Define): void {
  const [shell, flag] = setup.shell;

  if (setup.fifos) {
    define("readTextFile and readBinaryFile read a FIFO to its end once a writer appears", "R3 R4", async (env) => {
      await script(setup, env, "mkfifo fifo");
      const writer = (text: string) => run(env, [shell, flag, `printf '${text}' > fifo`], { timeout: 10 });
      const [textResult, textWriter] = await Promise.all([env.readTextFile("fifo", live), writer("hello\\nworld")]);
      assert.equal(value(textResult, "readTextFile"), "hello\nworld");
      assert.deepEqual(value(textWriter.result, "writer"), { exitCode: 0 });
      const [binaryResult] = await Promise.all([env.readBinaryFile("fifo", live), writer("\\357\\273\\277bin")]);
      const data = value(binaryResult, "readBinaryFile");
      assert.ok(Buffer.isBuffer(data));
      assert.equal(Buffer.from(data).toString("hex"), "efbbbf62696e");
    });

    define(
      "line readers open a FIFO once a writer appears, then fail unknown on the first read",
      "R3 R7 R8 R9",
      async (env) => {
        await script(setup, env, "mkfifo fifo");
        const writer = () => run(env, [shell, flag, "printf 'a\\nb\\n' > fifo"], { timeout: 10 });
        const [lines] = await Promise.all([env.readTextLines("fifo", undefined, live), writer()]);
        fails(lines, "unknown", "readTextLines", at(env, "fifo"));
        const [opened] = await Promise.all([env.openTextLineReader("fifo", live), writer()]);
        const reader = value(opened, "openTextLineReader");
        fails(await reader.readLine(live), "unknown", "readLine", at(env, "fifo"));
        await reader.close(live);
      },
    );

    define("writeFile and appendFile to a FIFO wait for a reader", "W7 W1 W3", async (env) => {
      await script(setup, env, "mkfifo fifo");
      const reader = () => run(env, [shell, flag, "cat fifo"], { timeout: 10 });
      const [written, read] = await Promise.all([env.writeFile("fifo", "to the reader", live), reader()]);
      value(written, "writeFile");
      assert.equal(read.stdout, "to the reader");
      const [appended, readAgain] = await Promise.all([env.appendFile("fifo", "appended", live), reader()]);
      value(appended, "appendFile");
      assert.equal(readAgain.stdout, "appended");
    });

    define(
      "FIFOs are not regular files: binary readers, metadata, truncate and flush refuse them",
      "R10 I6 M1 M2 W7",
      async (env) => {
        await script(setup, env, "mkfifo fifo");
        fails(await env.openBinaryReader("fifo", undefined, live), "invalid", "openBinaryReader", at(env, "fifo"));
        fails(await env.fileInfo("fifo", live), "invalid", "fileInfo", at(env, "fifo"));
        fails(await env.exists("fifo", live), "invalid", "exists", at(env, "fifo"));
        fails(await env.truncateFile("fifo", 0, live), "invalid", "truncateFile", at(env, "fifo"));
        fails(await env.flushFile("fifo", live), "invalid", "flushFile", at(env, "fifo"));
      },
    );

    define("listDir and directory readers skip FIFOs", "I6 D1 D5", async (env) => {
      await put(env, "d/file.txt", "x");
      await script(setup, env, "mkfifo d/fifo");
      assert.deepEqual(
        value(await env.listDir("d", live), "listDir").map((entry) => entry.name),
        ["file.txt"],
      );
      const reader = value(await env.openDirReader("d", live), "openDirReader");
      const page = value(await reader.next(10, live), "next");
      assert.deepEqual(
        page.entries.map((entry) => entry.name),
        ["file.txt"],
      );
      await reader.close(live);
    });

    define("/dev/null reads empty and cannot be truncated or flushed", "R3 R10 I6 W7", async (env) => {
      assert.equal(value(await env.readTextFile("/dev/null", live), "readTextFile"), "");
      assert.equal(value(await env.readBinaryFile("/dev/null", live), "readBinaryFile").length, 0);
      assert.deepEqual(value(await env.readTextLines("/dev/null", undefined, live), "readTextLines"), []);
      fails(await env.truncateFile("/dev/null", 0, live), "invalid", "truncateFile", "/dev/null");
      fails(await env.flushFile("/dev/null", live), "invalid", "flushFile", "/dev/null");
      fails(await env.openBinaryReader("/dev/null", undefined, live), "invalid", "openBinaryReader", "/dev/null");
      fails(await env.fileInfo("/dev/null", live), "invalid", "fileInfo", "/dev/null");
    });
  }

  define(
    "directories read as files fail is_directory; a line reader fails at its first readLine",
    "R3 R7 R8 R9",
    async (env) => {
      value(await env.createDir("dir", undefined, live), "createDir");
      fails(await env.readTextFile("dir", live), "is_directory", "readTextFile", at(env, "dir"));
      fails(await env.readBinaryFile("dir", live), "is_directory", "readBinaryFile", at(env, "dir"));
      fails(await env.readTextLines("dir", undefined, live), "is_directory", "readTextLines", at(env, "dir"));
      const reader = value(await env.openTextLineReader("dir", live), "openTextLineReader opens a directory");
      fails(await reader.readLine(live), "is_directory", "readLine", at(env, "dir"));
      await reader.close(live);
    },
  );

  if (setup.nonUtf8Names) {
    define(
      "names that are not UTF-8: listDir fails naming the first one in byte order, readers skip them",
      "D1 D2 D3",
      async (env) => {
        await script(setup, env, "mkdir d && cd d && touch b \"$(printf 'a\\377')\" é \"$(printf 'a\\376 z')\" z");
        fails(await env.listDir("d", live), "not_found", "listDir", at(env, "d", "a\uFFFD z"));
        const reader = value(await env.openDirReader("d", live), "openDirReader");
        const seen: string[] = [];
        for (;;) {
          const page = value(await reader.next(2, live), "next");
          seen.push(...page.entries.map((entry) => entry.name));
          if (page.done) break;
        }
        await reader.close(live);
        assert.deepEqual(seen.sort(), ["b", "z", "é"]);
      },
    );

    define("a real name a\\uFFFD next to the raw name a\\xFF gives two identical entries", "D3 ND5", async (env) => {
      await script(
        setup,
        env,
        "mkdir d && cd d && printf 12 > \"$(printf 'a\\357\\277\\275')\" && touch \"$(printf 'a\\377')\"",
      );
      const listed = value(await env.listDir("d", live), "listDir");
      const expected = { name: "a\uFFFD", path: at(env, "d", "a\uFFFD"), kind: "file", size: 2 };
      assert.deepEqual(
        listed.map((entry) => ({ ...entry, mtimeMs: 0 })),
        [
          { ...expected, mtimeMs: 0 },
          { ...expected, mtimeMs: 0 },
        ],
      );
      const reader = value(await env.openDirReader("d", live), "openDirReader");
      const page = value(await reader.next(10, live), "next");
      await reader.close(live);
      assert.deepEqual(
        page.entries.map((entry) => ({ ...entry, mtimeMs: 0 })),
        [
          { ...expected, mtimeMs: 0 },
          { ...expected, mtimeMs: 0 },
        ],
      );
    });
  }

  define(
    "files larger than every transfer chunk are written, appended and read intact",
    "R2 R4 R12 W1 W3",
    async (env) => {
      const size = setup.largeFileMiB * 1024 * 1024 + 17;
      const first = pattern(size, 1);
      const second = pattern(size, 2);
      await put(env, "big.bin", first);
      assert.ok(first.equals(await bytes(env, "big.bin")), "whole read after write");
      value(await env.appendFile("big.bin", second, live), "appendFile");
      const whole = await bytes(env, "big.bin");
      assert.equal(whole.length, 2 * size);
      assert.ok(Buffer.concat([first, second]).equals(whole), "whole read after append");
      const reader = value(await env.openBinaryReader("big.bin", undefined, live), "openBinaryReader");
      const offset = size - 1_000_003;
      const range = value(await reader.read(offset, 3_000_007, live), "read range");
      assert.ok(
        Buffer.from(range).equals(whole.subarray(offset, offset + 3_000_007)),
        "range across the append boundary",
      );
      const tail = value(await reader.read(2 * size - 5, 100, live), "read tail");
      assert.ok(Buffer.from(tail).equals(whole.subarray(2 * size - 5)), "short read at EOF");
      await reader.close(live);
    },
    { timeoutMs: 60_000 },
  );

  define(
    "large text files decode intact across read chunks",
    "R1 R4 R6 R9",
    async (env) => {
      const content = `\uFEFF${"é€😀x\n".repeat(Math.ceil((setup.largeFileMiB * 1024 * 1024) / 11))}`;
      await put(env, "big.txt", content);
      const read = value(await env.readTextFile("big.txt", live), "readTextFile");
      assert.ok(read === content, `readTextFile of ${content.length} chars keeps everything, BOM included`);
      const lines = value(await env.readTextLines("big.txt", { maxLines: 3 }, live), "readTextLines");
      assert.deepEqual(lines, ["é€😀x", "é€😀x", "é€😀x"]);
    },
    { timeoutMs: 60_000 },
  );
}
