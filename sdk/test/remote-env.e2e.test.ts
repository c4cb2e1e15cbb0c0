/**
 * RemoteExecutionEnv against the real agent (built by `make agent`), compared with the reference NodeExecutionEnv
 * on this same machine. These cases exercise the SDK's own logic end to end: chunked writes and pipelined reads,
 * decoding across read boundaries, raw-byte sorting, paging, special files and lost sessions. The full cross-env
 * conformance suite is in spec/.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Context, ExecutionEnv } from "../src/contract/types.js";
import { packagedAgent } from "../src/env/agent-binary.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { Connection } from "../src/wire/connection.js";
import { patterned } from "./fixtures/patterned.js";

const none: Context = { abortSignal: undefined };
const onPosix = process.platform !== "win32";

let connection: Connection;
let base: string;
let remote: RemoteExecutionEnv;
let local: NodeExecutionEnv;
let remoteRoot: string;
let localRoot: string;

beforeAll(() => {
  connection = new Connection({ command: [packagedAgent()] });
  base = realpathSync(mkdtempSync(join(tmpdir(), "outpost-remote-env-")));
});

afterAll(async () => {
  await connection.close();
  rmSync(base, { recursive: true, force: true });
});

let counter = 0;
beforeEach(() => {
  counter++;
  remoteRoot = join(base, `remote-${counter}`);
  localRoot = join(base, `local-${counter}`);
  mkdirSync(remoteRoot);
  mkdirSync(localRoot);
  remote = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: remoteRoot });
  local = new NodeExecutionEnv({ cwd: localRoot });
});

/** Replaces bytes by hex, mtimes by a marker, failures by their code, and each env's root by `<root>`. */
function normalize(value: unknown, root: string): unknown {
  const json = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof Uint8Array) return { bytes: Buffer.from(item).toString("hex") };
    if (item !== null && typeof item === "object" && "mtimeMs" in item) return { ...item, mtimeMs: "mtime" };
    if (item !== null && typeof item === "object" && "ok" in item && item.ok === false && "error" in item) {
      const error = item.error as { code: string; path?: string };
      return { ok: false, code: error.code, path: error.path };
    }
    return item;
  });
  return JSON.parse(json.split(root).join("<root>"));
}

/** Runs `operation` on the reference and on the remote env and expects equal normalized results. */
async function same(label: string, operation: (env: ExecutionEnv) => Promise<unknown>): Promise<unknown> {
  const expected = normalize(await operation(local), localRoot);
  const actual = normalize(await operation(remote), remoteRoot);
  expect([label, actual]).toEqual([label, expected]);
  return actual;
}

/**
 * The live connection seen through a filter of the agent's `features` (hiding one makes the real agent look like an
 * upstream daemon), recording the op of every request.
 */
function viewOf(features: (announced: string[]) => string[]): { view: Connection; ops: string[] } {
  const ops: string[] = [];
  const view = {
    info: async () => {
      const info = await connection.info();
      return { ...info, features: features(info.features) };
    },
    request: (op: string, json: Record<string, unknown>, options?: Parameters<Connection["request"]>[2]) => {
      ops.push(op);
      return connection.request(op, json, options);
    },
  };
  return { view: view as unknown as Connection, ops };
}

describe("readTextFile / readBinaryFile with and without the agent's one-request readFile", () => {
  it("answers like the reference on both paths, in one request exactly for files of 1..512 KiB", async () => {
    const oneRequest = viewOf((announced) => announced);
    const protocol1 = viewOf((announced) => announced.filter((feature) => feature !== "readFile"));
    expect((await connection.info()).features).toContain("readFile");
    const envs = [oneRequest, protocol1].map(
      ({ view }) => new RemoteExecutionEnv({ connection: view, id: "outpost:test", cwd: remoteRoot }),
    );
    const contents: Record<string, string | Uint8Array> = {
      "empty.txt": "",
      "one.bin": Uint8Array.from([0xff]),
      "bom.txt": "\ufeffbom\r\nline é",
      "full.bin": patterned(512 * 1024),
      "over.bin": patterned(512 * 1024 + 1),
      "dir/inner.txt": "inner",
    };
    for (const [name, content] of Object.entries(contents)) {
      await same(`write ${name}`, (env) => env.writeFile(name, content, none));
    }
    const paths = [...Object.keys(contents), "dir", "missing", "one.bin/x", ...(onPosix ? ["/dev/null"] : [])];
    for (const path of paths) {
      for (const [index, env] of envs.entries()) {
        remote = env;
        await same(`readTextFile ${path} (${index})`, (target) => target.readTextFile(path, none));
        await same(`readBinaryFile ${path} (${index})`, (target) => target.readBinaryFile(path, none));
      }
    }
    const counts = (ops: string[]) =>
      Object.fromEntries(
        ["readFile", "open", "pread", "close"].map((op) => [op, ops.filter((seen) => seen === op).length]),
      );
    // Two reads of each path: one.bin, bom.txt, full.bin (and the files of dir) fit one request; the rest open a
    // handle (or fail to open) and go on as in protocol 1.
    expect(protocol1.ops).not.toContain("readFile");
    expect(oneRequest.ops).not.toContain("open");
    const fused = counts(oneRequest.ops);
    const plain = counts(protocol1.ops);
    expect(fused.readFile).toBe(2 * paths.length);
    expect(plain.open).toBe(2 * paths.length);
    // Each of the 4 files that fit saves its pread and close on both reads.
    expect([plain.pread - fused.pread, plain.close - fused.close]).toEqual([8, 8]);
  });
});

describe("readTextFile / readBinaryFile on the protocol-1 path (no readFile feature)", () => {
  it.runIf(onPosix)("follows a symbolic link, as Node's readFile does", async () => {
    const { view, ops } = viewOf((announced) => announced.filter((feature) => feature !== "readFile"));
    remote = new RemoteExecutionEnv({ connection: view, id: "outpost:test", cwd: remoteRoot });
    for (const [root, env] of [
      [localRoot, local],
      [remoteRoot, remote],
    ] as const) {
      writeFileSync(join(root, "target.txt"), "through the link");
      symlinkSync("target.txt", join(root, "link.txt"));
      symlinkSync("missing.txt", join(root, "dangling.txt"));
      expect(await env.exists("link.txt", none)).toEqual({ ok: true, value: true });
    }
    await same("readTextFile link.txt", (env) => env.readTextFile("link.txt", none));
    await same("readBinaryFile link.txt", (env) => env.readBinaryFile("link.txt", none));
    await same("readTextFile dangling.txt", (env) => env.readTextFile("dangling.txt", none));
    expect(ops).toContain("open");
    expect(ops).not.toContain("readFile");
  });
});

describe("RemoteExecutionEnv over the real agent", () => {
  it("writes, appends and reads files larger than one transfer chunk, in order", async () => {
    const first = patterned(3_500_017, 1);
    const second = patterned(3_500_017, 2);
    expect(await remote.writeFile("big/data.bin", first, none)).toEqual({ ok: true, value: undefined });
    expect(await remote.appendFile("big/data.bin", second, none)).toEqual({ ok: true, value: undefined });
    const whole = await remote.readBinaryFile("big/data.bin", none);
    if (!whole.ok) throw whole.error;
    expect(Buffer.isBuffer(whole.value)).toBe(true);
    expect(Buffer.compare(whole.value, Buffer.concat([first, second]))).toBe(0);
    const opened = await remote.openBinaryReader("big/data.bin", undefined, none);
    if (!opened.ok) throw opened.error;
    const range = await opened.value.read(1_000_003, 2_000_000, none);
    expect(
      range.ok && Buffer.compare(Buffer.from(range.value), Buffer.from(first.subarray(1_000_003, 3_000_003))),
    ).toBe(0);
    const tail = await opened.value.read(6_999_000, 5_000, none);
    expect(tail.ok && Buffer.compare(Buffer.from(tail.value), Buffer.from(second.subarray(3_498_983)))).toBe(0);
    await opened.value.close(none);
  });

  it("decodes text like the reference across read boundaries, BOM, invalid bytes and long lines", async () => {
    const contents: Record<string, string | Uint8Array> = {
      "bom.txt": "\ufeffbom\r\nline",
      "bad.txt": Uint8Array.from([0xe2, 0x82, 0x0a, 0xff, 0xef, 0xbb, 0xbf]),
      "long.txt": `${"é".repeat(300_001)}\nend`,
      "split.txt": Uint8Array.from([
        ...patterned(512 * 1024 - 1).map((byte) => 0x20 + (byte % 90)),
        0xf0,
        0x9f,
        0x98,
        0x80,
        0x0a,
      ]),
      "empty.txt": "",
    };
    for (const [name, content] of Object.entries(contents)) {
      await same(`write ${name}`, (env) => env.writeFile(name, content, none));
      await same(`readTextFile ${name}`, (env) => env.readTextFile(name, none));
      await same(`readBinaryFile ${name}`, (env) => env.readBinaryFile(name, none));
      await same(`readTextLines ${name}`, (env) => env.readTextLines(name, undefined, none));
      await same(`readTextLines 2 ${name}`, (env) => env.readTextLines(name, { maxLines: 2 }, none));
    }
  });

  it("matches the reference for metadata, directories and their errors", async () => {
    for (const name of ["b", "a2", "C", "é", "_x", "a", "dir/z", "dir/sub/y"]) {
      await same(`write ${name}`, (env) => env.writeFile(name, name, none));
    }
    await same("listDir", (env) => env.listDir(".", none));
    await same("listDir file", (env) => env.listDir("a", none));
    await same("listDir missing", (env) => env.listDir("missing", none));
    await same("fileInfo", (env) => env.fileInfo("dir/./sub/../z", none));
    await same("exists under a file", (env) => env.exists("a/x", none));
    await same("createDir over file", (env) => env.createDir("a", undefined, none));
    await same("remove dir", (env) => env.remove("dir", undefined, none));
    await same("rename missing", (env) => env.renameFile("missing", "b", none));
    await same("truncate", (env) => env.truncateFile("b", 5, none));
    await same("read truncated", (env) => env.readBinaryFile("b", none));
    await same("flush", (env) => env.flushFile("b", none));
    await same("canonical", (env) => env.canonicalPath("dir/sub/..", none));
    await same("NUL", (env) => env.writeFile("nul/a\u0000b", "x", none));
    await same("NUL parent created", (env) => env.fileInfo("nul", none));
    const pages = async (env: ExecutionEnv) => {
      const opened = await env.openDirReader(".", none);
      if (!opened.ok) return opened;
      const names: string[] = [];
      for (;;) {
        const page = await opened.value.next(2, none);
        if (!page.ok) return page;
        names.push(...page.value.entries.map((info) => info.name));
        if (page.value.done) break;
      }
      await opened.value.close(none);
      return names.sort();
    };
    await same("dir reader", pages);
  });

  it.runIf(process.platform === "linux")("lists names that are not UTF-8 like the reference", async () => {
    for (const root of [localRoot, remoteRoot]) {
      for (const name of [
        Buffer.from("b"),
        Buffer.from([0x61, 0xff]),
        Buffer.from("é"),
        Buffer.from([0x61, 0xfe, 0x20, 0x7a]),
      ]) {
        writeFileSync(Buffer.concat([Buffer.from(`${root}/`), name]), "x");
      }
    }
    const listed = await same("listDir lossy", (env) => env.listDir(".", none));
    expect(listed).toEqual({ ok: false, code: "not_found", path: "<root>/a\ufffd z" });
    await same("dir reader skips lossy names", async (env) => {
      const opened = await env.openDirReader(".", none);
      if (!opened.ok) return opened;
      const page = await opened.value.next(10, none);
      await opened.value.close(none);
      return page.ok ? page.value.entries.map((info) => info.name).sort() : page;
    });
  });

  it.runIf(onPosix)("reads /dev/null, FIFOs and directories like the reference", async () => {
    await same("null text", (env) => env.readTextFile("/dev/null", none));
    await same("null binary", (env) => env.readBinaryFile("/dev/null", none));
    await same("null lines", (env) => env.readTextLines("/dev/null", undefined, none));
    await same("mkdir", (env) => env.createDir("dir", undefined, none));
    await same("dir text", (env) => env.readTextFile("dir", none));
    await same("dir binary", (env) => env.readBinaryFile("dir", none));
    await same("dir lines", (env) => env.readTextLines("dir", undefined, none));
    await same("dir reader", (env) => env.openBinaryReader("dir", undefined, none));
    for (const root of [localRoot, remoteRoot]) execFileSync("mkfifo", [join(root, "fifo")]);
    const feed = (root: string) => {
      // A writer that blocks until the reader opens the FIFO, then writes across several pipe buffers and exits.
      spawn("sh", ["-c", 'head -c 200000 /dev/zero | tr "\\0" "x" > "$1"', "sh", join(root, "fifo")], {
        stdio: "ignore",
      });
    };
    await same("fifo text", async (env) => {
      feed(env === local ? localRoot : remoteRoot);
      const text = await env.readTextFile("fifo", none);
      return text.ok ? { ok: true, length: text.value.length, sample: text.value.slice(0, 10) } : text;
    });
    await same("fifo info", (env) => env.fileInfo("fifo", none));
    await same("fifo reader", (env) => env.openBinaryReader("fifo", undefined, none));
  });

  it("fails requests on handles of a lost agent instead of reaching the new one", async () => {
    writeFileSync(join(remoteRoot, "a.txt"), "AAA");
    writeFileSync(join(remoteRoot, "b.txt"), "BBB");
    const stale = await remote.openBinaryReader("a.txt", undefined, none);
    if (!stale.ok) throw stale.error;
    const lines = await remote.openTextLineReader("a.txt", none);
    if (!lines.ok) throw lines.error;
    const { pid } = await connection.info();
    const session = connection.session();
    process.kill(pid, "SIGKILL");
    // Wait until the connection has seen the agent die (until then a request still goes to the dead session).
    while (connection.session() === session) await new Promise((resolve) => setTimeout(resolve, 5));
    // Path operations start a new agent; its handle numbers start at 1 again.
    const fresh = await remote.openBinaryReader("b.txt", undefined, none);
    if (!fresh.ok) throw fresh.error;
    expect((await connection.info()).pid).not.toBe(pid);
    const staleRead = await stale.value.read(0, 3, none);
    expect(staleRead.ok ? undefined : staleRead.error.code).toBe("unknown");
    const staleLine = await lines.value.readLine(none);
    expect(staleLine.ok ? undefined : staleLine.error.code).toBe("unknown");
    await stale.value.close(none);
    const freshRead = await fresh.value.read(0, 3, none);
    expect(freshRead.ok && Buffer.from(freshRead.value).toString()).toBe("BBB");
    await fresh.value.close(none);
  });

  it("stops a chunked write at the abort checkpoint, leaving a prefix of the content", async () => {
    const controller = new AbortController();
    let chunks = 0;
    // The caller gives up while the third chunk is on its way, after the check for it: as Node finishes the piece it
    // started, that chunk is written and no later one is sent, so the file holds exactly the first piece (sent with
    // the open) and the three chunks, whole and in order.
    const watching = {
      info: () => connection.info(),
      request: (op: string, json: Record<string, unknown>, options?: Parameters<Connection["request"]>[2]) => {
        if (op === "writeChunk" && ++chunks === 3) controller.abort();
        return connection.request(op, json, options);
      },
    } as unknown as Connection;
    const env = new RemoteExecutionEnv({ connection: watching, id: "outpost:test", cwd: remoteRoot });
    const content = patterned(40 * 512 * 1024, 3);
    const result = await env.writeFile("partial.bin", content, { abortSignal: controller.signal });
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "aborted",
      "The operation was aborted",
      join(remoteRoot, "partial.bin"),
    ]);
    expect(chunks).toBe(3);
    const written = await remote.readBinaryFile("partial.bin", none);
    if (!written.ok) throw written.error;
    expect(written.value.length).toBe(4 * 512 * 1024);
    expect(Buffer.compare(written.value, Buffer.from(content.subarray(0, written.value.length)))).toBe(0);
  });

  it("creates temp directories and files in the agent's tmpdir", async () => {
    const dir = await remote.createTempDir(undefined, none);
    if (!dir.ok) throw dir.error;
    expect(dir.value).toMatch(/\/tmp-[A-Za-z0-9]{6}$/);
    const file = await remote.createTempFile({ prefix: "p-", suffix: ".log" }, none);
    if (!file.ok) throw file.error;
    expect(await remote.readTextFile(file.value, none)).toEqual({ ok: true, value: "" });
    const info = await connection.info();
    expect(file.value.startsWith(`${info.tmpdir}/tmp-`)).toBe(true);
    await same("temp file in missing subdir", async (env) => {
      const result = await env.createTempFile({ prefix: "sub/" }, none);
      return result.ok ? result : { ok: false, code: result.error.code };
    });
    rmSync(dir.value, { recursive: true, force: true });
    rmSync(join(file.value, ".."), { recursive: true, force: true });
  });
});
