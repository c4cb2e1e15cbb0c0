/** Whole-file reads, the text line reader and `readTextLines`. */
import { aborted, assert, at, belowFile, fails, live, put, script, unhex, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/** Invalid UTF-8 sequences and what WHATWG decoding (one U+FFFD per maximal subpart) makes of them. */
const invalidSequences: [string, string][] = [
  ["eda080", "\uFFFD\uFFFD\uFFFD"],
  ["c0af", "\uFFFD\uFFFD"],
  ["f4908080", "\uFFFD\uFFFD\uFFFD\uFFFD"],
  ["e2820a", "\uFFFD\n"],
  ["f09f9841", "\uFFFDA"],
  ["e282e282ac", "\uFFFD€"],
  ["ff", "\uFFFD"],
  ["e282", "\uFFFD"],
];

/** Registers the reading cases. */
export function readCases(setup: Setup, define: Define): void {
  define("readTextFile keeps a leading BOM and decodes invalid UTF-8 like TextDecoder", "R1 R6", async (env) => {
    await put(env, "bom.txt", unhex("efbbbf 61 e2820a"));
    assert.equal(value(await env.readTextFile("bom.txt", live), "bom.txt"), "\uFEFFa\uFFFD\n");
    for (const [bytes, expected] of invalidSequences) {
      await put(env, "bad.txt", unhex(`41${bytes}42`));
      assert.equal(value(await env.readTextFile("bad.txt", live), bytes), `A${expected}B`, bytes);
    }
    await put(env, "empty.txt", "");
    assert.equal(value(await env.readTextFile("empty.txt", live), "empty"), "");
  });

  define(
    "readTextFile and readBinaryFile fail not_found and aborted with the resolved path",
    "R1 R2 E2 A3",
    async (env) => {
      fails(await env.readTextFile("missing.txt", live), "not_found", "readTextFile", at(env, "missing.txt"));
      fails(await env.readBinaryFile("missing.txt", live), "not_found", "readBinaryFile", at(env, "missing.txt"));
      await put(env, "f.txt", "x");
      fails(await env.readTextFile("f.txt", aborted()), "aborted", "readTextFile", at(env, "f.txt"));
      fails(await env.readBinaryFile("f.txt", aborted()), "aborted", "readBinaryFile", at(env, "f.txt"));
      fails(await env.readTextFile("f.txt/x", live), belowFile(setup), "readTextFile f.txt/x", at(env, "f.txt/x"));
    },
  );

  define("files of more than 2 GiB fail readTextFile and readBinaryFile at once with unknown", "R5 E8", async (env) => {
    await put(env, "huge.bin", "");
    value(await env.truncateFile("huge.bin", 2 ** 31, live), "a sparse 2 GiB file");
    fails(await env.readBinaryFile("huge.bin", live), "unknown", "readBinaryFile", at(env, "huge.bin"));
    fails(await env.readTextFile("huge.bin", live), "unknown", "readTextFile", at(env, "huge.bin"));
    value(await env.remove("huge.bin", undefined, live), "remove");
  });

  define(
    "readTextFile and readBinaryFile read files of 0, 1, 512 KiB and 512 KiB + 1 bytes and links to them whole",
    "R1 R2 R4 R16",
    async (env) => {
      const sizes = [0, 1, 512 * 1024 - 1, 512 * 1024, 512 * 1024 + 1];
      for (const size of sizes) {
        // A leading BOM and a 2-byte character across the 512 KiB boundary, where one read ends.
        const data = Buffer.alloc(size, 0x61);
        if (size >= 3) data.set([0xef, 0xbb, 0xbf]);
        if (size > 512 * 1024) data.set([0xc3, 0xa9], 512 * 1024 - 1);
        await put(env, `s${size}.bin`, data);
        if (setup.symlinks) await script(setup, env, `ln -s s${size}.bin l${size}`);
        for (const name of setup.symlinks ? [`s${size}.bin`, `l${size}`] : [`s${size}.bin`]) {
          const read = value(await env.readBinaryFile(name, live), `readBinaryFile ${name}`);
          assert.ok(Buffer.isBuffer(read), `${name} is a Buffer`);
          assert.ok(Buffer.from(read).equals(data), `${name}: the exact bytes`);
          assert.equal(value(await env.readTextFile(name, live), `readTextFile ${name}`), data.toString("utf8"), name);
        }
      }
      fails(await env.readTextFile("s1.bin/x", live), belowFile(setup), "below a file", at(env, "s1.bin/x"));
      fails(await env.readBinaryFile("s1.bin", aborted()), "aborted", "aborted", at(env, "s1.bin"));
    },
  );

  define(
    "files over one request are written, appended, overwritten shorter and read back whole",
    "R1 R2 R17 W1 W3",
    async (env) => {
      // Pieces of 512 KiB, a 2-byte character across each boundary, and lengths that end inside a piece.
      const pattern = (length: number, seed: number) => {
        const data = Buffer.alloc(length);
        for (let i = 0; i < length; i++) data[i] = 0x41 + ((i * 7 + seed) % 26);
        for (let at = 512 * 1024 - 1; at + 1 < length; at += 512 * 1024) data.set([0xc3, 0xa9], at);
        return data;
      };
      const first = pattern(3 * 1024 * 1024 + 1, 0);
      const more = pattern(2 * 1024 * 1024 + 5, 3);
      value(await env.writeFile("big.txt", first, live), "writeFile");
      value(await env.appendFile("big.txt", more, live), "appendFile");
      const whole = Buffer.concat([first, more]);
      const read = value(await env.readBinaryFile("big.txt", live), "readBinaryFile");
      assert.equal(read.length, 5 * 1024 * 1024 + 6);
      assert.ok(Buffer.from(read).equals(whole), "the exact bytes after write and append");
      assert.equal(value(await env.readTextFile("big.txt", live), "readTextFile"), whole.toString("utf8"));
      // Overwriting with less truncates: nothing of the longer file is left behind the new end.
      const shorter = pattern(1024 * 1024 + 1, 5);
      value(await env.writeFile("big.txt", shorter, live), "writeFile shorter");
      assert.ok(Buffer.from(value(await env.readBinaryFile("big.txt", live), "reread")).equals(shorter), "shorter");
      assert.equal(value(await env.fileInfo("big.txt", live), "fileInfo").size, 1024 * 1024 + 1);
    },
  );

  define("readBinaryFile returns the exact bytes as a Node Buffer", "R2", async (env) => {
    const data = unhex("efbbbf 00 ff 0d0a e282 80");
    await put(env, "b.bin", data);
    const read = value(await env.readBinaryFile("b.bin", live), "readBinaryFile");
    assert.ok(Buffer.isBuffer(read), "readBinaryFile returns a Buffer");
    assert.deepEqual([...read], [...data]);
    await put(env, "empty.bin", new Uint8Array(0));
    const empty = value(await env.readBinaryFile("empty.bin", live), "empty");
    assert.ok(Buffer.isBuffer(empty), "an empty read is a Buffer too");
    assert.equal(empty.length, 0);
  });

  define(
    "the text line reader finds lines across its 64 KiB reads after lines it already returned",
    "R7 R8",
    async (env) => {
      // The first read (64 KiB) ends inside the second line; the third and fourth lines come with the next read.
      const long = "b".repeat(64 * 1024 - 2);
      await put(env, "across.txt", `a\n${long}c\nd\ne`);
      const reader = value(await env.openTextLineReader("across.txt", live), "openTextLineReader");
      const lines: [number, string, boolean][] = [];
      for (;;) {
        const line = value(await reader.readLine(live), "readLine");
        if (line === undefined) break;
        lines.push([line.text.length, line.text.slice(-1), line.terminated]);
        assert.ok(lines.length < 10, "runaway reader");
      }
      await reader.close(live);
      assert.deepEqual(lines, [
        [1, "a", true],
        [64 * 1024 - 1, "c", true],
        [1, "d", true],
        [1, "e", false],
      ]);
    },
  );

  define("the text line reader splits on LF only and reports unterminated last lines", "R7 R8 R15", async (env) => {
    const lines = async (content: string | Uint8Array) => {
      await put(env, "lines.txt", content);
      const reader = value(await env.openTextLineReader("lines.txt", live), "openTextLineReader");
      const out: [string, boolean][] = [];
      for (;;) {
        const line = value(await reader.readLine(live), "readLine");
        if (line === undefined) break;
        out.push([line.text, line.terminated]);
        assert.ok(out.length < 100, "runaway reader");
      }
      assert.equal(value(await reader.readLine(live), "readLine after end"), undefined, "undefined again after EOF");
      await reader.close(live);
      await reader.close(live);
      return out;
    };
    assert.deepEqual(await lines("one\r\n\ntwo\npartial"), [
      ["one\r", true],
      ["", true],
      ["two", true],
      ["partial", false],
    ]);
    assert.deepEqual(await lines(""), []);
    assert.deepEqual(await lines("\n"), [["", true]]);
    assert.deepEqual(await lines("a\r"), [["a\r", false]]);
    assert.deepEqual(await lines("x\ny\n"), [
      ["x", true],
      ["y", true],
    ]);
  });

  define(
    "the text line reader drops the file's BOM only, keeps later U+FEFF and replaces invalid bytes",
    "R6 R8",
    async (env) => {
      await put(env, "t.txt", unhex("efbbbf 61 0a efbbbf 62 0a e282 0a ff 63 0a e282"));
      const reader = value(await env.openTextLineReader("t.txt", live), "open");
      const got: string[] = [];
      for (
        let line = value(await reader.readLine(live), "readLine");
        line;
        line = value(await reader.readLine(live), "readLine")
      ) {
        got.push(line.text);
      }
      await reader.close(live);
      assert.deepEqual(got, ["a", "\uFEFFb", "\uFFFD", "\uFFFDc", "\uFFFD"]);
      await put(env, "bom-only.txt", unhex("efbbbf"));
      assert.deepEqual(value(await env.readTextLines("bom-only.txt", undefined, live), "bom only"), []);
    },
  );

  define(
    "the text line reader handles lines longer than one read and characters split across reads",
    "R6 R8",
    async (env) => {
      // 65,535 ASCII bytes put the first byte of "é" at the end of the first 64 KiB read.
      const long = `${"x".repeat(65_535)}é${"é".repeat(70_000)}`;
      await put(env, "long.txt", `${long}\nend`);
      const reader = value(await env.openTextLineReader("long.txt", live), "open");
      const first = value(await reader.readLine(live), "first line");
      assert.equal(first?.text.length, long.length);
      assert.ok(first?.text === long, "first line decoded intact");
      assert.deepEqual(value(await reader.readLine(live), "second"), { text: "end", terminated: false });
      await reader.close(live);
    },
  );

  define(
    "the text line reader checks abort before the closed check, and refuses use after close",
    "R7 R8 A3 A4 R15",
    async (env) => {
      await put(env, "f.txt", "a\nb\n");
      fails(await env.openTextLineReader("missing", live), "not_found", "missing", at(env, "missing"));
      fails(await env.openTextLineReader("f.txt", aborted()), "aborted", "aborted open", at(env, "f.txt"));
      const reader = value(await env.openTextLineReader("f.txt", live), "open");
      fails(await reader.readLine(aborted()), "aborted", "aborted readLine", at(env, "f.txt"));
      assert.deepEqual(value(await reader.readLine(live), "readLine after an aborted call"), {
        text: "a",
        terminated: true,
      });
      await reader.close(live);
      fails(await reader.readLine(live), "invalid", "readLine after close", at(env, "f.txt"));
      fails(await reader.readLine(aborted()), "aborted", "aborted readLine after close", at(env, "f.txt"));
    },
  );

  define("readTextLines honours maxLines, short-circuiting limits <= 0", "R9 ND10", async (env) => {
    await put(env, "f.txt", "\uFEFFone\r\ntwo\nthree");
    assert.deepEqual(value(await env.readTextLines("f.txt", undefined, live), "all"), ["one\r", "two", "three"]);
    assert.deepEqual(value(await env.readTextLines("f.txt", {}, live), "{}"), ["one\r", "two", "three"]);
    assert.deepEqual(value(await env.readTextLines("f.txt", { maxLines: 2 }, live), "2"), ["one\r", "two"]);
    assert.deepEqual(value(await env.readTextLines("f.txt", { maxLines: 1.5 }, live), "1.5"), ["one\r", "two"]);
    assert.deepEqual(value(await env.readTextLines("f.txt", { maxLines: 9 }, live), "9"), ["one\r", "two", "three"]);
    assert.deepEqual(value(await env.readTextLines("f.txt", { maxLines: Number.NaN }, live), "NaN"), []);
    for (const maxLines of [0, -1, -0.5, Number.NEGATIVE_INFINITY]) {
      assert.deepEqual(value(await env.readTextLines("missing", { maxLines }, live), `missing ${maxLines}`), []);
      assert.deepEqual(value(await env.readTextLines("missing", { maxLines }, aborted()), `aborted ${maxLines}`), []);
    }
    const nullLimit = { maxLines: null } as unknown as { maxLines: number };
    assert.deepEqual(value(await env.readTextLines("missing", nullLimit, live), "null"), [], "null counts as <= 0");
    fails(
      await env.readTextLines("missing", { maxLines: Number.NaN }, live),
      "not_found",
      "NaN still opens",
      at(env, "missing"),
    );
    fails(await env.readTextLines("missing", undefined, live), "not_found", "missing", at(env, "missing"));
    fails(await env.readTextLines("f.txt", { maxLines: 1 }, aborted()), "aborted", "aborted", at(env, "f.txt"));
  });
}
