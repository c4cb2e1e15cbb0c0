/** Binary readers (byte ranges, line scans, renames, symbolic links) and directory readers. */
import type { DirReader, FileInfo } from "@outpost/sdk";
import { expectedScan, scanSample } from "./line-scan-model.js";
import { aborted, assert, at, belowFile, fails, live, put, script, unhex, value } from "./support.js";
import type { Define, Setup } from "./types.js";

async function allPages(reader: DirReader, pageSize: number): Promise<FileInfo[][]> {
  const pages: FileInfo[][] = [];
  for (;;) {
    const page = value(await reader.next(pageSize, live), "next");
    assert.ok(page.entries.length <= pageSize, `page of at most ${pageSize}`);
    pages.push(page.entries);
    if (page.done) return pages;
    assert.ok(pages.length < 100, "runaway directory reader");
  }
}

/** Registers the reader cases. */
export function readerCases(setup: Setup, define: Define): void {
  define("binary reader reads byte ranges of the opened file", "R10 R11 R12 R15 A4", async (env) => {
    await put(env, "data.txt", "hello world");
    const reader = value(await env.openBinaryReader("data.txt", undefined, live), "open");
    const info = value(await reader.info(live), "info");
    assert.deepEqual(
      { ...info, mtimeMs: 0 },
      { name: "data.txt", path: at(env, "data.txt"), kind: "file", size: 11, mtimeMs: 0 },
    );
    assert.equal(typeof info.mtimeMs, "number");
    const read = async (offset: number, length: number) => {
      const bytes = value(await reader.read(offset, length, live), `read(${offset}, ${length})`);
      assert.ok(bytes instanceof Uint8Array, "a Uint8Array");
      assert.ok(!Buffer.isBuffer(bytes), "a plain Uint8Array, not a Buffer");
      return Buffer.from(bytes).toString();
    };
    assert.equal(await read(0, 5), "hello");
    assert.equal(await read(6, 100), "world");
    assert.equal(await read(11, 4), "");
    assert.equal(await read(50, 1), "");
    assert.equal(await read(3, 0), "");
    for (const [offset, length] of [
      [-1, 1],
      [0, 1.5],
      [0, -1],
      [1.5, 1],
      [Number.NaN, 1],
      [0, Number.POSITIVE_INFINITY],
      [Number.MAX_SAFE_INTEGER + 1, 1],
    ]) {
      fails(await reader.read(offset, length, live), "invalid", `read(${offset}, ${length})`, at(env, "data.txt"));
    }
    fails(await reader.read(0, 1, aborted()), "aborted", "aborted read", at(env, "data.txt"));
    fails(await reader.read(-1, 1, aborted()), "aborted", "abort before validation", at(env, "data.txt"));
    fails(await reader.info(aborted()), "aborted", "aborted info", at(env, "data.txt"));
    fails(await reader.scanLines({ startLine: 0 }, aborted()), "aborted", "aborted scan", at(env, "data.txt"));
    await reader.close(live);
    await reader.close(live);
    fails(await reader.read(0, 1, live), "invalid", "read after close", at(env, "data.txt"));
    fails(await reader.info(live), "invalid", "info after close", at(env, "data.txt"));
    fails(await reader.scanLines({ startLine: 0 }, live), "invalid", "scan after close", at(env, "data.txt"));
    fails(await reader.read(0, 1, aborted()), "aborted", "abort before the closed check", at(env, "data.txt"));
  });

  define("binary reader scans lines like decoding the whole file", "R13 R14", async (env) => {
    await put(env, "scan.txt", scanSample);
    const reader = value(await env.openBinaryReader("scan.txt", undefined, live), "open");
    const ranges: [number, number | undefined][] = [
      [0, undefined],
      [0, 1],
      [1, 3],
      [2, 3],
      [3, undefined],
      [4, 9],
      [4, 5],
      [5, undefined],
      [9, undefined],
      [9, 12],
    ];
    for (const [startLine, endLine] of ranges) {
      const options = endLine === undefined ? { startLine } : { startLine, endLine };
      const scan = value(await reader.scanLines(options, live), JSON.stringify(options));
      assert.deepEqual(scan, expectedScan(scanSample, startLine, endLine), JSON.stringify(options));
    }
    for (const bad of [
      { startLine: 2, endLine: 2 },
      { startLine: 3, endLine: 1 },
      { startLine: -1 },
      { startLine: 1.5 },
      { startLine: 0, endLine: 1.5 },
      { startLine: Number.NaN },
    ]) {
      fails(await reader.scanLines(bad, live), "invalid", JSON.stringify(bad), at(env, "scan.txt"));
    }
    await reader.close(live);
    await put(env, "empty.txt", "");
    const empty = value(await env.openBinaryReader("empty.txt", undefined, live), "open empty");
    assert.deepEqual(value(await empty.scanLines({ startLine: 0 }, live), "empty"), expectedScan(new Uint8Array(0), 0));
    assert.deepEqual(
      value(await empty.scanLines({ startLine: 1 }, live), "empty 1"),
      expectedScan(new Uint8Array(0), 1),
    );
    await empty.close(live);
    await put(env, "short.txt", unhex("efbb"));
    const short = value(await env.openBinaryReader("short.txt", undefined, live), "open short");
    assert.deepEqual(value(await short.scanLines({ startLine: 0 }, live), "short"), expectedScan(unhex("efbb"), 0));
    await short.close(live);
  });

  define("binary reader scans files larger than one read", "R13 R14", async (env) => {
    const line = `${"é".repeat(20)}${"x".repeat(17)}\n`;
    const data = new Uint8Array(Buffer.from(`\uFEFF${line.repeat(5000)}tail`));
    await put(env, "big.txt", data);
    const reader = value(await env.openBinaryReader("big.txt", undefined, live), "open");
    for (const [startLine, endLine] of [
      [0, undefined],
      [1234, 3333],
      [4999, undefined],
      [5000, 5001],
    ] as [number, number | undefined][]) {
      const options = endLine === undefined ? { startLine } : { startLine, endLine };
      assert.deepEqual(
        value(await reader.scanLines(options, live), JSON.stringify(options)),
        expectedScan(data, startLine, endLine),
      );
    }
    await reader.close(live);
  });

  define("binary reader keeps reading the file it opened after a rename", "R10 I3", async (env) => {
    await put(env, "data.txt", "one");
    const reader = value(await env.openBinaryReader("data.txt", undefined, live), "open");
    value(await env.renameFile("data.txt", "moved.txt", live), "rename");
    await put(env, "data.txt", "two, longer");
    assert.equal(Buffer.from(value(await reader.read(0, 100, live), "read")).toString(), "one");
    const info = value(await reader.info(live), "info");
    assert.equal(info.name, "data.txt", "info keeps the original name");
    assert.equal(info.path, at(env, "data.txt"));
    assert.equal(info.size, 3, "info describes the opened file");
    await reader.close(live);
  });

  define("binary reader refuses directories, missing files and aborted opens", "R10 E2 A3", async (env) => {
    value(await env.createDir("dir", undefined, live), "createDir");
    await put(env, "f.txt", "x");
    fails(await env.openBinaryReader("dir", undefined, live), "is_directory", "directory", at(env, "dir"));
    fails(await env.openBinaryReader("missing", undefined, live), "not_found", "missing", at(env, "missing"));
    fails(await env.openBinaryReader("f.txt/x", undefined, live), belowFile(setup), "under a file", at(env, "f.txt/x"));
    fails(await env.openBinaryReader("f.txt", undefined, aborted()), "aborted", "aborted", at(env, "f.txt"));
    fails(
      await env.openBinaryReader("f.txt", { noFollow: true }, aborted()),
      "aborted",
      "aborted noFollow",
      at(env, "f.txt"),
    );
  });

  if (setup.symlinks) {
    define("binary reader follows symlinks unless noFollow refuses the final one", "R10 I3", async (env) => {
      value(await env.createDir("dir", undefined, live), "createDir");
      await put(env, "data.txt", "target");
      await put(env, "dir/inner.txt", "inner");
      await script(
        setup,
        env,
        "ln -s data.txt link.txt && ln -s dir dirlink && ln -s l1 l2 && ln -s l2 l1 && ln -s dir dirlink2",
      );
      const followed = value(await env.openBinaryReader("link.txt", undefined, live), "link.txt");
      assert.equal(Buffer.from(value(await followed.read(0, 10, live), "read")).toString(), "target");
      const info = value(await followed.info(live), "info");
      assert.equal(info.name, "link.txt");
      assert.equal(info.kind, "file");
      assert.equal(info.size, 6);
      await followed.close(live);
      fails(
        await env.openBinaryReader("link.txt", { noFollow: true }, live),
        "invalid",
        "noFollow",
        at(env, "link.txt"),
      );
      const inner = value(
        await env.openBinaryReader("dirlink/inner.txt", { noFollow: true }, live),
        "dirlink/inner.txt",
      );
      assert.equal(Buffer.from(value(await inner.read(0, 10, live), "read")).toString(), "inner");
      await inner.close(live);
      fails(
        await env.openBinaryReader("dirlink", { noFollow: true }, live),
        "invalid",
        "noFollow on a dir link",
        at(env, "dirlink"),
      );
      fails(
        await env.openBinaryReader("dirlink2", undefined, live),
        "is_directory",
        "followed dir link",
        at(env, "dirlink2"),
      );
      fails(await env.openBinaryReader("l1", undefined, live), "unknown", "loop", at(env, "l1"));
      fails(await env.openBinaryReader("l1", { noFollow: true }, live), "invalid", "loop with noFollow", at(env, "l1"));
    });
  }

  define("directory reader pages every entry exactly once", "D4 D5 D8 I1 I4", async (env) => {
    for (const name of ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"])
      await put(env, `dir/${name}`, name.slice(0, 1).repeat(5));
    value(await env.createDir("dir/sub", undefined, live), "createDir sub");
    const reader = value(await env.openDirReader("dir", live), "open");
    fails(await reader.next(2, aborted()), "aborted", "an aborted next", at(env, "dir"));
    const pages = await allPages(reader, 2);
    const entries = pages.flat();
    assert.deepEqual(entries.map((entry) => entry.name).sort(), ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "sub"]);
    assert.ok(
      pages.slice(0, -1).every((page) => page.length === 2),
      "every page but the last is full",
    );
    for (const entry of entries) {
      assert.equal(entry.path, at(env, "dir", entry.name));
      assert.equal(entry.kind, entry.name === "sub" ? "directory" : "file");
      if (entry.kind === "file") assert.equal(entry.size, 5);
      assert.equal(typeof entry.mtimeMs, "number");
    }
    assert.deepEqual(value(await reader.next(2, live), "after done"), { entries: [], done: true });
    await reader.close(live);
  });

  define("an abort while a directory page is read loses only the entry being read", "D5 A3", async (env) => {
    for (const name of ["a", "b", "c", "d"]) await put(env, `dir/${name}`, name);
    const reader = value(await env.openDirReader("dir", live), "open");
    const controller = new AbortController();
    const page = reader.next(10, { abortSignal: controller.signal });
    controller.abort(); // while the page is being read: Node checks after each entry it reads
    fails(await page, "aborted", "the aborted page", at(env, "dir"));
    const rest = await allPages(reader, 10);
    assert.equal(rest.flat().length, 3, "the three entries after the lost one are still read");
    await reader.close(live);
  });

  define("directory reader reports the end and refuses use after close", "D5 R15 A4", async (env) => {
    value(await env.createDir("empty", undefined, live), "createDir");
    const reader = value(await env.openDirReader("empty", live), "open");
    assert.deepEqual(value(await reader.next(10, live), "first"), { entries: [], done: true });
    assert.deepEqual(value(await reader.next(10, live), "second"), { entries: [], done: true });
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      fails(await reader.next(bad, live), "invalid", `next(${bad})`, at(env, "empty"));
    }
    fails(await reader.next(1, aborted()), "aborted", "aborted", at(env, "empty"));
    await reader.close(live);
    await reader.close(live);
    fails(await reader.next(1, live), "invalid", "after close", at(env, "empty"));
    fails(await reader.next(0, aborted()), "aborted", "abort before the closed check", at(env, "empty"));
  });

  define("directory reader of exactly maxEntries entries ends with an empty page", "D5", async (env) => {
    await put(env, "d/one", "1");
    await put(env, "d/two", "2");
    const reader = value(await env.openDirReader("d", live), "open");
    const first = value(await reader.next(2, live), "first");
    assert.equal(first.entries.length, 2);
    if (!first.done) assert.deepEqual(value(await reader.next(2, live), "second"), { entries: [], done: true });
    await reader.close(live);
  });

  define("directory reader refuses missing paths and files", "D4 E2 A3", async (env) => {
    await put(env, "f.txt", "x");
    fails(await env.openDirReader("missing", live), "not_found", "missing", at(env, "missing"));
    fails(await env.openDirReader("f.txt", live), "not_directory", "file", at(env, "f.txt"));
    fails(await env.openDirReader("", aborted()), "aborted", "aborted", env.cwd);
  });

  define("directory reader skips entries removed during enumeration", "D7", async (env) => {
    for (let i = 0; i < 5; i++) await put(env, `dir/f${i}`, "x");
    const reader = value(await env.openDirReader("dir", live), "open");
    for (let i = 0; i < 5; i++) value(await env.remove(`dir/f${i}`, undefined, live), "remove");
    const pages = await allPages(reader, 2);
    assert.deepEqual(pages.flat(), []);
    await reader.close(live);
  });

  define("directory reader of a directory removed after opening ends without error", "D6 ND6", async (env) => {
    for (let i = 0; i < 3; i++) await put(env, `dir/f${i}`, "x");
    const reader = value(await env.openDirReader("dir", live), "open");
    value(await env.remove("dir", { recursive: true }, live), "remove");
    assert.deepEqual(value(await reader.next(10, live), "next"), { entries: [], done: true });
    await reader.close(live);
  });
}
