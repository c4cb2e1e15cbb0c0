/**
 * The SDK side of RemoteExecutionEnv against an in-memory agent: chunking, pipelining, decoding across reads,
 * paging and sorting, abort checkpoints, and handles bound to their session. (The same env against the real agent
 * is in remote-env.e2e.test.ts; cross-env conformance lives in spec/.)
 */
import { describe, expect, it, vi } from "vitest";
import type { Context } from "../src/contract/types.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { FakeAgent, type FakeEntry, remoteError, wireInfo } from "./remote-env.fake.js";

const KiB = 1024;
const none: Context = { abortSignal: undefined };

function context(signal: AbortSignal): Context {
  return { abortSignal: signal };
}

function abortedContext(): Context {
  const controller = new AbortController();
  controller.abort();
  return context(controller.signal);
}

function setup(cwd = "/w"): { agent: FakeAgent; env: RemoteExecutionEnv } {
  const agent = new FakeAgent();
  const env = new RemoteExecutionEnv({ connection: agent.connection(), id: "outpost:test", cwd });
  return { agent, env };
}

/** Bytes 0..n-1 in a pattern that makes misplaced chunks visible. */
function patterned(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[index] = (index * 7 + (index >> 16)) & 0xff;
  return bytes;
}

/** Makes `path` open as a directory does on the agent (`open(path, "r")` succeeds) and every `pread` fail EISDIR. */
function directoryOpenedForReading(agent: FakeAgent, path: string): void {
  agent.streams.set(path, new Uint8Array(0));
  agent.hooks.set("pread", () => {
    throw remoteError("EISDIR", "EISDIR: illegal operation on a directory, read");
  });
}

function failedCode(result: { ok: true } | { ok: false; error: { code: string } }): string | undefined {
  return result.ok ? undefined : result.error.code;
}

describe("construction and paths", () => {
  it("keeps cwd exactly as assigned and resolves against it at call time, with the agent's home", async () => {
    const { env } = setup("rel/../work/");
    expect(env.cwd).toBe("rel/../work/");
    expect(env.id).toBe("outpost:test");
    expect(await env.absolutePath("a.txt", none)).toEqual({ ok: true, value: "/srv/agent/work/a.txt" });
    env.cwd = "/other";
    expect(await env.absolutePath("a.txt", none)).toEqual({ ok: true, value: "/other/a.txt" });
    expect(await env.absolutePath("~/x", none)).toEqual({ ok: true, value: "/home/agent/x" });
    expect(await env.joinPath(["a/", "..", "b"], none)).toEqual({ ok: true, value: "b" });
  });

  it("uses win32 rules for a Windows agent", async () => {
    const { agent, env } = setup("C:\\work");
    agent.remoteInfo = {
      ...agent.remoteInfo,
      os: "windows",
      home: "C:\\Users\\u",
      cwd: "C:\\start",
      driveCwds: { "D:": "D:\\d" },
    };
    expect(await env.absolutePath("sub/f.txt", none)).toEqual({ ok: true, value: "C:\\work\\sub\\f.txt" });
    expect(await env.absolutePath("D:x", none)).toEqual({ ok: true, value: "D:\\d\\x" });
    expect(await env.joinPath(["a", "b"], none)).toEqual({ ok: true, value: "a\\b" });
  });

  it("fails unknown with the start's message when the agent cannot be reached, aborted if aborted", async () => {
    const { agent, env } = setup();
    agent.info = async () => {
      throw remoteError("spawn_error", "ssh gpu-box failed: Network is unreachable");
    };
    const read = await env.readTextFile("a", none);
    expect(read.ok ? undefined : [read.error.code, read.error.message]).toEqual([
      "unknown",
      "ssh gpu-box failed: Network is unreachable",
    ]);
    expect(failedCode(await env.fileInfo("a", abortedContext()))).toBe("aborted");
    // Every method answers with a failed Result, none throws: also those that resolve their paths themselves.
    for (const result of [
      await env.renameFile("a", "b", none),
      await env.truncateFile("a", 0, none),
      await env.listFiles("a", undefined, none),
      await env.absolutePath("a", none),
      await env.joinPath(["a", "b"], none),
      await env.writeFile("a", "x", none),
      await env.listDir("a", none),
    ]) {
      expect(failedCode(result)).toBe("unknown");
    }
  });

  it("refuses NUL bytes as Node does (unknown) without asking the agent", async () => {
    const { agent, env } = setup();
    for (const result of [
      await env.readTextFile("a\u0000", none),
      await env.fileInfo("a\u0000", none),
      await env.listDir("d\u0000", none),
      await env.remove("x\u0000", { recursive: true, force: true }, none),
      await env.renameFile("a", "b\u0000", none),
      await env.renameFile("a\u0000", "b", none),
      await env.truncateFile("a\u0000", 0, none),
      await env.createTempDir("p\u0000", none),
    ]) {
      expect(failedCode(result)).toBe("unknown");
    }
    expect(agent.calls).toEqual([]);
    const exists = await env.exists("a\u0000", none);
    expect(failedCode(exists)).toBe("unknown");
    // The abort check comes first.
    expect(failedCode(await env.fileInfo("a\u0000", abortedContext()))).toBe("aborted");
    // Invalid sizes are reported before the path.
    expect(failedCode(await env.truncateFile("a\u0000", -1, none))).toBe("invalid");
  });

  it("creates the parents of a NUL-named file before refusing it, as Node's mkdir + writeFile do", async () => {
    const { agent, env } = setup();
    const result = await env.writeFile("new/dir/a\u0000b", "x", none);
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["unknown", "/w/new/dir/a\u0000b"]);
    expect(agent.calls.map((call) => [call.op, call.json])).toEqual([
      ["mkdir", { path: "/w/new/dir", recursive: true }],
    ]);
    const inParent = await env.appendFile("bad\u0000/x", "x", none);
    expect(failedCode(inParent)).toBe("unknown");
    expect(agent.calls).toHaveLength(1);
  });
});

describe("readBinaryFile / readTextFile", () => {
  it("reads a large regular file in pipelined 512 KiB reads, 8 in flight before the path is measured, into a Buffer", async () => {
    const { agent, env } = setup();
    const content = patterned(20 * 512 * KiB + 5);
    agent.files.set("/w/big.bin", content);
    // The read window grows above its floor of 8 from the reads' timing (read-ahead.test.ts checks how); with the
    // clock stopped it has no estimate, so the count in flight is the floor whatever this machine's speed.
    vi.useFakeTimers({ toFake: ["performance"] });
    const result = await env.readBinaryFile("big.bin", none).finally(() => vi.useRealTimers());
    if (!result.ok) throw result.error;
    expect(Buffer.isBuffer(result.value)).toBe(true);
    expect(Buffer.compare(result.value, content)).toBe(0);
    const reads = agent.callsOf("pread").map((call) => [call.json.offset, call.json.length]);
    expect(reads).toEqual(Array.from({ length: 21 }, (_, index) => [index * 512 * KiB, index === 20 ? 5 : 512 * KiB]));
    expect(agent.maxInFlight.get("pread")).toBe(8);
    expect(agent.calls.at(-1)?.op).toBe("close");
    expect(agent.openHandles()).toBe(0);
  });

  it("reads a small file with one read of its size", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/s", new Uint8Array([1, 2, 3]));
    const result = await env.readBinaryFile("/w/s", none);
    expect(result.ok && [...result.value]).toEqual([1, 2, 3]);
    expect(agent.callsOf("pread").map((call) => call.json)).toEqual([{ handle: 1, offset: 0, length: 3 }]);
    // An agent that does not announce the one-request op (an upstream daemon) never receives it.
    expect(agent.calls.map((call) => call.op)).toEqual(["open", "pread", "close"]);
  });

  it("reads only up to the size at open even if the file grew", async () => {
    const { agent, env } = setup();
    const content = patterned(600 * KiB);
    agent.files.set("/w/grow", content);
    agent.hooks.set("pread", (_call, index) => {
      if (index === 0) agent.files.set("/w/grow", patterned(900 * KiB));
    });
    const binary = await env.readBinaryFile("grow", none);
    expect(binary.ok && binary.value.length).toBe(600 * KiB);
  });

  it("continues after a short read of a file that shrank, and stops at EOF", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/shrink", patterned(2 * 512 * KiB));
    agent.hooks.set("pread", (_call, index) => {
      if (index === 0) agent.files.set("/w/shrink", patterned(512 * KiB + 10));
    });
    const result = await env.readBinaryFile("shrink", none);
    expect(result.ok && result.value.length).toBe(512 * KiB + 10);
    expect(result.ok && Buffer.compare(result.value, patterned(512 * KiB + 10))).toBe(0);
  });

  it("decodes text like Node's readFile: BOM kept, characters and invalid sequences split across reads", async () => {
    const { agent, env } = setup();
    // Put a 4-byte character, a truncated sequence and a lone continuation byte across the 512 KiB boundaries.
    const parts: number[] = [0xef, 0xbb, 0xbf];
    while (parts.length < 512 * KiB - 2) parts.push(0x61);
    parts.push(0xf0, 0x9f, 0x98, 0x80);
    while (parts.length < 2 * 512 * KiB - 1) parts.push(0xc3, 0xa9);
    parts.push(0xe2, 0x82, 0x41, 0x80, 0xed, 0xa0, 0x80, 0x0a);
    const bytes = Uint8Array.from(parts);
    agent.files.set("/w/t.txt", bytes);
    const result = await env.readTextFile("t.txt", none);
    expect(result.ok && result.value).toBe(Buffer.from(bytes).toString("utf8"));
    expect(result.ok && result.value).toBe(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes));
    expect(result.ok && result.value.charCodeAt(0)).toBe(0xfeff);
  });

  it("reads non-regular files (FIFOs, devices) with sequential 64 KiB reads to EOF", async () => {
    const { agent, env } = setup();
    const bytes = Buffer.from("\ufeffhé€😀 line\n", "utf8");
    agent.streams.set("/w/fifo", bytes);
    agent.pieceSize = 3; // every multi-byte character is split
    const text = await env.readTextFile("fifo", none);
    expect(text).toEqual({ ok: true, value: bytes.toString("utf8") });
    const reads = agent.callsOf("pread").map((call) => call.json);
    expect(reads.every((json) => json.offset === undefined && json.length === 64 * KiB)).toBe(true);
    agent.streams.set("/w/fifo2", bytes);
    const binary = await env.readBinaryFile("fifo2", none);
    expect(binary.ok && Buffer.compare(binary.value, bytes)).toBe(0);
    agent.streams.set("/dev/null", new Uint8Array(0));
    expect(await env.readTextFile("/dev/null", none)).toEqual({ ok: true, value: "" });
    const empty = await env.readBinaryFile("/dev/null", none);
    expect(empty.ok && empty.value.length).toBe(0);
  });

  it("refuses files over 2 GiB before reading, closing the handle", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/huge", new Uint8Array(1));
    agent.statSizes.set("/w/huge", 2 ** 31);
    const result = await env.readTextFile("huge", none);
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "unknown",
      "File size (2147483648) is greater than 2 GiB",
      "/w/huge",
    ]);
    expect(agent.callsOf("pread")).toEqual([]);
    expect(agent.openHandles()).toBe(0);
    agent.statSizes.set("/w/huge", 2 ** 31 - 1);
    agent.files.set("/w/huge", new Uint8Array(0));
    expect((await env.readBinaryFile("huge", none)).ok).toBe(true);
  });

  it("reports a stat failure carried by the open reply, closing the handle", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/p", new Uint8Array(1));
    agent.statErrors.set("/w/p", { code: "EACCES", message: "EACCES: permission denied, fstat" });
    const denied = await env.readTextFile("p", none);
    expect(denied.ok ? undefined : [denied.error.code, denied.error.path]).toEqual(["permission_denied", "/w/p"]);
    expect(agent.openHandles()).toBe(0);
    // Node's line reader never stats, so the same file opens there.
    const lines = await env.openTextLineReader("p", none);
    expect(lines.ok).toBe(true);
  });

  it("stops at the abort checkpoint between reads, settles reads in flight, then closes", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/big", patterned(12 * 512 * KiB));
    const controller = new AbortController();
    agent.hooks.set("pread", (_call, index) => {
      if (index === 2) controller.abort();
    });
    const result = await env.readBinaryFile("big", context(controller.signal));
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "aborted",
      "The operation was aborted",
      "/w/big",
    ]);
    expect(agent.calls.at(-1)?.op).toBe("close");
    expect(agent.openHandles()).toBe(0);
  });

  it("reports a directory as is_directory at the first read", async () => {
    const { agent, env } = setup();
    directoryOpenedForReading(agent, "/w/dir");
    const result = await env.readTextFile("dir", none);
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["is_directory", "/w/dir"]);
    expect(agent.openHandles()).toBe(0);
  });
});

/** An env whose agent announces the one-request `readFile` op. */
function setupOneRequest(): { agent: FakeAgent; env: RemoteExecutionEnv } {
  const made = setup();
  made.agent.remoteInfo = { ...made.agent.remoteInfo, features: ["readFile"] };
  return made;
}

describe("readBinaryFile / readTextFile in one request (the readFile feature)", () => {
  it("reads a file of 1..512 KiB with the single readFile request, no handle", async () => {
    const { agent, env } = setupOneRequest();
    const bom = Buffer.from("\ufeffhé\n", "utf8");
    agent.files.set("/w/t.txt", bom);
    agent.files.set("/w/full", patterned(512 * KiB));
    const text = await env.readTextFile("t.txt", none);
    expect(text).toEqual({ ok: true, value: "\ufeffhé\n" });
    const full = await env.readBinaryFile("full", none);
    expect(full.ok && Buffer.isBuffer(full.value) && Buffer.compare(full.value, patterned(512 * KiB))).toBe(0);
    expect(agent.calls.map((call) => [call.op, call.json])).toEqual([
      ["readFile", { path: "/w/t.txt", max: 512 * KiB }],
      ["readFile", { path: "/w/full", max: 512 * KiB }],
    ]);
    expect(agent.openHandles()).toBe(0);
  });

  it("goes on with pread and close on the handle of a file that does not fit one read", async () => {
    const { agent, env } = setupOneRequest();
    agent.files.set("/w/big", patterned(512 * KiB + 1));
    agent.files.set("/w/empty", new Uint8Array(0));
    agent.streams.set("/w/fifo", Buffer.from("stream"));
    const big = await env.readBinaryFile("big", none);
    expect(big.ok && Buffer.compare(big.value, patterned(512 * KiB + 1))).toBe(0);
    expect(agent.calls.map((call) => call.op)).toEqual(["readFile", "pread", "pread", "close"]);
    expect(await env.readTextFile("empty", none)).toEqual({ ok: true, value: "" });
    expect(await env.readTextFile("fifo", none)).toEqual({ ok: true, value: "stream" });
    expect(agent.callsOf("readFile")).toHaveLength(3);
    expect(agent.openHandles()).toBe(0);
  });

  it("keeps the size limit and a stat failure carried by the reply, closing the handle", async () => {
    const { agent, env } = setupOneRequest();
    agent.files.set("/w/huge", new Uint8Array(1));
    agent.statSizes.set("/w/huge", 2 ** 31);
    const huge = await env.readBinaryFile("huge", none);
    expect(huge.ok ? undefined : [huge.error.code, huge.error.message]).toEqual([
      "unknown",
      "File size (2147483648) is greater than 2 GiB",
    ]);
    agent.files.set("/w/p", new Uint8Array(1));
    agent.statErrors.set("/w/p", { code: "EACCES", message: "EACCES: permission denied, fstat" });
    const denied = await env.readTextFile("p", none);
    expect(denied.ok ? undefined : [denied.error.code, denied.error.path]).toEqual(["permission_denied", "/w/p"]);
    const missing = await env.readTextFile("missing", none);
    expect(missing.ok ? undefined : [missing.error.code, missing.error.path]).toEqual(["not_found", "/w/missing"]);
    expect(agent.callsOf("pread")).toEqual([]);
    expect(agent.openHandles()).toBe(0);
  });

  it("answers Node's aborted error when the signal fired while the one request ran", async () => {
    const { agent, env } = setupOneRequest();
    agent.files.set("/w/s", new Uint8Array([1, 2, 3]));
    const controller = new AbortController();
    agent.hooks.set("readFile", () => controller.abort());
    const result = await env.readBinaryFile("s", context(controller.signal));
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "aborted",
      "The operation was aborted",
      "/w/s",
    ]);
    const entry = await env.readTextFile("s", abortedContext());
    expect(entry.ok ? undefined : [entry.error.code, entry.error.message]).toEqual(["aborted", "aborted"]);
    expect(agent.callsOf("readFile")).toHaveLength(1);
    expect(agent.openHandles()).toBe(0);
  });
});

describe("writeFile / appendFile", () => {
  it("sends the first 512 KiB with the open and the rest as chunks on the kept handle, 8 in flight", async () => {
    const { agent, env } = setup();
    const content = patterned(20 * 512 * KiB + 3);
    // The window grows above its floor of 8 from the acknowledgements' timing (send-window.test.ts checks how); with
    // the clock stopped it has no estimate, so the count in flight is the floor whatever this machine's speed.
    vi.useFakeTimers({ toFake: ["performance"] });
    const result = await env.writeFile("out/big.bin", content, none).finally(() => vi.useRealTimers());
    expect(result).toEqual({ ok: true, value: undefined });
    const [write] = agent.callsOf("write");
    expect(write.json).toEqual({ path: "/w/out/big.bin", append: false, parents: true, keep: true });
    expect(write.payload.length).toBe(512 * KiB);
    const chunks = agent.callsOf("writeChunk");
    expect(chunks.map((call) => call.payload.length)).toEqual([...Array(19).fill(512 * KiB), 3]);
    expect(chunks.every((call) => call.session === 1 && call.json.handle === 1)).toBe(true);
    expect(agent.maxInFlight.get("writeChunk")).toBe(8);
    expect(Buffer.compare(Buffer.from(agent.files.get("/w/out/big.bin")!), content)).toBe(0);
    expect(agent.calls.at(-1)?.op).toBe("close");
  });

  it("writes small and empty contents with one write and no handle", async () => {
    const { agent, env } = setup();
    expect((await env.writeFile("e", "", none)).ok).toBe(true);
    expect((await env.writeFile("s", "h\ud800é", none)).ok).toBe(true);
    expect(agent.calls.map((call) => [call.op, call.json.keep, call.payload.length])).toEqual([
      ["write", false, 0],
      ["write", false, 6],
    ]);
    // A lone surrogate is written as EF BF BD, as Node encodes strings.
    expect([...agent.files.get("/w/s")!]).toEqual([0x68, 0xef, 0xbf, 0xbd, 0xc3, 0xa9]);
  });

  it("checks abort before each chunk (writeFile): pieces in flight are cancelled, none is written after the agent saw the abort (W9)", async () => {
    const { agent, env } = setup();
    const controller = new AbortController();
    // The abort comes at the 12th piece's turn in the agent (the first piece goes with `write`), before it is written:
    // the fake then drops it as the agent drops a piece whose cancel arrived first.
    let sentAtAbort = -1;
    agent.hooks.set("writeChunk", (_call, index) => {
      if (index !== 10) return;
      controller.abort();
      sentAtAbort = agent.callsOf("writeChunk").length;
    });
    const result = await env.writeFile("f", patterned(30 * 512 * KiB), context(controller.signal));
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "aborted",
      "The operation was aborted",
      "/w/f",
    ]);
    // The file ends at a piece boundary with exactly the pieces written before the agent saw the abort.
    expect(agent.files.get("/w/f")?.length).toBe(11 * 512 * KiB);
    // Pipelined: more pieces than the written ones were in flight, and none was sent after the abort.
    expect(sentAtAbort).toBeGreaterThan(11);
    expect(agent.callsOf("writeChunk").length).toBe(sentAtAbort);
    expect(agent.calls.at(-1)?.op).toBe("close");
    expect(agent.openHandles()).toBe(0);
  });

  it("writeFile that was aborted after its last chunk was written succeeds, as Node's does", async () => {
    const { agent, env } = setup();
    const controller = new AbortController();
    const content = patterned(4 * 512 * KiB);
    agent.hooks.set("close", () => controller.abort());
    const result = await env.writeFile("f", content, context(controller.signal));
    expect(result.ok).toBe(true);
    expect(Buffer.from(agent.files.get("/w/f") ?? []).equals(content)).toBe(true);
  });

  it("reports the first failed chunk, not the later refusals of the poisoned handle", async () => {
    const { agent, env } = setup();
    agent.hooks.set("writeChunk", (_call, index) => {
      if (index === 3) throw remoteError("ENOSPC", "ENOSPC: no space left on device, write");
      if (index > 3) throw remoteError("EBADF", "an earlier write failed");
    });
    const result = await env.writeFile("f", patterned(15 * 512 * KiB), none);
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "unknown",
      "ENOSPC: no space left on device, write",
      "/w/f",
    ]);
    expect(agent.calls.at(-1)?.op).toBe("close");
  });

  it("reports a parent failure with the agent's path (the parent)", async () => {
    const { agent, env } = setup();
    agent.hooks.set("write", () => {
      throw remoteError("ENOTDIR", "ENOTDIR: not a directory, mkdir '/w/file/sub'", "/w/file/sub");
    });
    const result = await env.writeFile("file/sub/x", "x", none);
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["not_directory", "/w/file/sub"]);
  });

  it("appendFile appends, never checks between chunks, and checks abort after the data is written", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/log", new Uint8Array([1]));
    const controller = new AbortController();
    agent.hooks.set("writeChunk", (_call, index) => {
      if (index === 0) controller.abort();
    });
    const result = await env.appendFile("log", patterned(4 * 512 * KiB), context(controller.signal));
    expect(failedCode(result)).toBe("aborted");
    expect(agent.callsOf("write")[0].json).toEqual({ path: "/w/log", append: true, parents: true, keep: true });
    expect(agent.callsOf("writeChunk")).toHaveLength(3);
    expect(agent.files.get("/w/log")?.length).toBe(1 + 4 * 512 * KiB);
    expect(failedCode(await env.appendFile("log", "x", abortedContext()))).toBe("aborted");
    expect(agent.callsOf("write")).toHaveLength(1);
  });
});

describe("metadata and small operations", () => {
  it("fileInfo builds FileInfo from lstat and refuses other kinds", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/dir/f.txt", new Uint8Array(5));
    expect(await env.fileInfo("dir/./f.txt", none)).toEqual({
      ok: true,
      value: { name: "f.txt", path: "/w/dir/f.txt", kind: "file", size: 5, mtimeMs: 1_700_000_000_123.4568 },
    });
    agent.streams.set("/w/fifo", new Uint8Array(0));
    const fifo = await env.fileInfo("fifo", none);
    expect(fifo.ok ? undefined : [fifo.error.code, fifo.error.message, fifo.error.path]).toEqual([
      "invalid",
      "Unsupported file type",
      "/w/fifo",
    ]);
    expect(await env.exists("fifo", none)).toEqual(fifo);
    expect(await env.exists("missing", none)).toEqual({ ok: true, value: false });
    expect(await env.exists("dir/f.txt", none)).toEqual({ ok: true, value: true });
    expect(failedCode(await env.exists("missing", abortedContext()))).toBe("aborted");
  });

  it("computes mtimeMs as Node does", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/m", new Uint8Array(0));
    const result = await env.fileInfo("m", none);
    expect(result.ok && result.value.mtimeMs).toBe(1_700_000_000 * 1000 + 123_456_789 / 1e6);
  });

  it("truncateFile validates the size after the abort check, accepts -0, and checks abort afterwards", async () => {
    const { agent, env } = setup();
    for (const size of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      const result = await env.truncateFile("f", size, none);
      expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
        "invalid",
        "File size must be a non-negative safe integer",
        "/w/f",
      ]);
    }
    expect(failedCode(await env.truncateFile("f", -1, abortedContext()))).toBe("aborted");
    expect(agent.calls).toEqual([]);
    expect(await env.truncateFile("f", -0, none)).toEqual({ ok: true, value: undefined });
    expect(JSON.stringify(agent.callsOf("truncate")[0].json)).toBe('{"path":"/w/f","size":0}');
    const controller = new AbortController();
    agent.hooks.set("truncate", () => controller.abort());
    expect(failedCode(await env.truncateFile("f", 3, context(controller.signal)))).toBe("aborted");
    expect(agent.callsOf("truncate")).toHaveLength(2);
  });

  it("flushFile checks abort after the fsync", async () => {
    const { agent, env } = setup();
    const controller = new AbortController();
    agent.hooks.set("fsync", () => controller.abort());
    const result = await env.flushFile("f", context(controller.signal));
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["aborted", "/w/f"]);
    expect(agent.callsOf("fsync")).toHaveLength(1);
  });

  it("renameFile reports the destination when aborted and the source on failure", async () => {
    const { agent, env } = setup();
    const aborted = await env.renameFile("a", "b", abortedContext());
    expect(aborted.ok ? undefined : [aborted.error.code, aborted.error.path]).toEqual(["aborted", "/w/b"]);
    agent.hooks.set("rename", () => {
      throw remoteError("ENOENT", "ENOENT: no such file or directory, rename '/w/a' -> '/w/b'");
    });
    const failed = await env.renameFile("a", "b", none);
    expect(failed.ok ? undefined : [failed.error.code, failed.error.path]).toEqual(["not_found", "/w/a"]);
    expect(agent.callsOf("rename")[0].json).toEqual({ path: "/w/a", to: "/w/b" });
  });

  it("passes createDir/remove defaults and realpath results", async () => {
    const { agent, env } = setup();
    await env.createDir("d", undefined, none);
    await env.createDir("e", { recursive: false }, none);
    await env.remove("r", undefined, none);
    await env.remove("s", { recursive: true }, none);
    expect(await env.canonicalPath("x/../y", none)).toEqual({ ok: true, value: "/w/y" });
    expect(agent.calls.map((call) => [call.op, call.json])).toEqual([
      ["mkdir", { path: "/w/d", recursive: true }],
      ["mkdir", { path: "/w/e", recursive: false }],
      ["rm", { path: "/w/r", recursive: false, force: false }],
      ["rm", { path: "/w/s", recursive: true, force: false }],
      ["realpath", { path: "/w/y" }],
    ]);
    const aborted = [
      await env.createDir("d", undefined, abortedContext()),
      await env.remove("r", undefined, abortedContext()),
      await env.canonicalPath("c", abortedContext()),
    ];
    expect(aborted.map((result) => (result.ok ? undefined : [result.error.code, result.error.path]))).toEqual([
      ["aborted", "/w/d"],
      ["aborted", "/w/r"],
      ["aborted", "/w/c"],
    ]);
    expect(agent.calls).toHaveLength(5);
  });

  it("creates temp directories from the agent's tmpdir and temp files inside a fresh one", async () => {
    const { agent, env } = setup();
    expect(await env.createTempDir(undefined, none)).toEqual({ ok: true, value: "/tmp/agent/tmp-AbC123" });
    expect(await env.createTempDir("", none)).toEqual({ ok: true, value: "/tmp/agentAbC123" });
    expect(await env.createTempDir("../x-", none)).toEqual({ ok: true, value: "/tmp/x-AbC123" });
    const aborted = await env.createTempDir("p", abortedContext());
    expect(aborted.ok ? undefined : [aborted.error.code, aborted.error.path]).toEqual(["aborted", undefined]);
    const file = await env.createTempFile({ prefix: "pre-", suffix: ".log" }, none);
    if (!file.ok) throw file.error;
    expect(file.value).toMatch(
      /^\/tmp\/agent\/tmp-AbC123\/pre-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.log$/,
    );
    const write = agent.callsOf("write")[0];
    expect(write.json).toEqual({ path: file.value, append: false, parents: false, keep: false });
    expect(write.payload.length).toBe(0);
    expect(failedCode(await env.createTempFile(undefined, abortedContext()))).toBe("aborted");
    agent.hooks.set("write", () => {
      throw remoteError("ENOENT", "ENOENT: no such file or directory, open");
    });
    const failed = await env.createTempFile({ prefix: "sub/" }, none);
    expect(failed.ok ? undefined : failed.error.code).toBe("not_found");
    expect(failed.ok ? undefined : failed.error.path).toMatch(/^\/tmp\/agent\/tmp-AbC123\/sub\//);
  });

  it("sends watch targets resolved like paths, in the wire shape, with the env's watch options", async () => {
    const agent = new FakeAgent();
    const env = new RemoteExecutionEnv({
      connection: agent.connection(),
      id: "outpost:test",
      cwd: "/w",
      watch: { mode: "polling", pollIntervalMs: 100 },
    });
    agent.hooks.set("watch", () => {
      throw remoteError("EINVAL", "Watched paths exceed 3 directories");
    });
    const result = await env.watch(
      [
        { path: "skills", recursive: true, exclude: { hidden: true, names: ["node_modules"] } },
        { path: "~/AGENTS.md" },
        { path: "file:///etc/x" },
      ],
      () => {},
      none,
    );
    expect(agent.callsOf("watch").map((call) => call.json)).toEqual([
      {
        targets: [
          { path: "/w/skills", recursive: true, exclude: { hidden: true, names: ["node_modules"] } },
          { path: "/home/agent/AGENTS.md", recursive: false, exclude: { hidden: false, names: [] } },
          { path: "/etc/x", recursive: false, exclude: { hidden: false, names: [] } },
        ],
        mode: "polling",
        pollIntervalMs: 100,
      },
    ]);
    // The budget error of an open maps like Node's: invalid, no path.
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("invalid");
    expect(result.error.message).toBe("Watched paths exceed 3 directories");
    expect(result.error.path).toBeUndefined();
  });

  it("checks for an abort before sending a watch", async () => {
    const { agent, env } = setup();
    expect(failedCode(await env.watch([{ path: "." }], () => {}, abortedContext()))).toBe("aborted");
    expect(agent.callsOf("watch")).toEqual([]);
  });
});

function entry(name: string, kind = "file", size = 1, raw?: number[]): FakeEntry {
  return raw === undefined ? { name, info: wireInfo(kind, size) } : { name, raw, info: wireInfo(kind, size) };
}

describe("listDir", () => {
  it("sorts by raw name bytes like libuv's scandir and reads all pages", async () => {
    const { agent, env } = setup();
    const names = ["b", "é", "Z", "_x", "a2", "a", "C"];
    agent.dirs.set(
      "/w/d",
      names.map((name) => entry(name)),
    );
    const result = await env.listDir("d", none);
    expect(result.ok && result.value.map((info) => info.name)).toEqual(["C", "Z", "_x", "a", "a2", "b", "é"]);
    expect(result.ok && result.value[0]).toEqual({
      name: "C",
      path: "/w/d/C",
      kind: "file",
      size: 1,
      mtimeMs: 1_700_000_000_123.4568,
    });
    const many = Array.from({ length: 2500 }, (_, index) => entry(`f${String(index).padStart(5, "0")}`));
    agent.dirs.set("/w/many", [...many].reverse());
    const listed = await env.listDir("many", none);
    expect(listed.ok && listed.value.map((info) => info.name)).toEqual(many.map((item) => item.name));
    expect(
      agent
        .callsOf("readdir")
        .slice(1)
        .map((call) => call.json.max),
    ).toEqual([1000, 1000, 1000]);
    expect(agent.openHandles()).toBe(0);
  });

  it("sorts by raw bytes (not decoded names) and fails on the first entry that cannot be lstat'ed", async () => {
    const { agent, env } = setup();
    const lossy = (raw: number[]): FakeEntry => ({
      name: Buffer.from(raw).toString("utf8"),
      raw,
      error: { code: "ENOENT", message: "ENOENT: no such file or directory, lstat" },
    });
    agent.dirs.set("/w/d", [entry("b"), lossy([0x61, 0xfe, 0x20, 0x7a]), entry("é"), lossy([0x61, 0xff]), entry("z")]);
    const result = await env.listDir("d", none);
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["not_found", "/w/d/a\ufffd z"]);
    // A real "a\uFFFD" sorts after the raw 0x61 0xFF (EF BF BD > FF is false: 0xEF < 0xFF).
    agent.dirs.set("/w/e", [lossy([0x61, 0xff]), entry("a\ufffd"), entry("a")]);
    const second = await env.listDir("e", none);
    expect(second.ok ? undefined : second.error.path).toBe("/w/e/a\ufffd");
    expect(second.ok ? undefined : second.error.code).toBe("not_found");
  });

  it("skips kinds other than file/directory/symlink and fails on any entry error (even ENOENT)", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("sock", "other"), entry("l", "symlink", 3), entry("sub", "directory", 4096)]);
    const result = await env.listDir("d", none);
    expect(result.ok && result.value.map((info) => [info.name, info.kind])).toEqual([
      ["l", "symlink"],
      ["sub", "directory"],
    ]);
    agent.dirs.set("/w/e", [
      entry("a"),
      { name: "b", error: { code: "EACCES", message: "EACCES: permission denied" } },
    ]);
    const denied = await env.listDir("e", none);
    expect(denied.ok ? undefined : [denied.error.code, denied.error.path]).toEqual(["permission_denied", "/w/e/b"]);
  });

  it("names Node's scandir in the message of a failed listing", async () => {
    const { agent, env } = setup();
    agent.hooks.set("opendir", () => {
      throw remoteError("ENOTDIR", "ENOTDIR: not a directory, opendir '/w/f.txt'", "/w/f.txt");
    });
    const listed = await env.listDir("f.txt", none);
    expect(listed.ok ? undefined : [listed.error.code, listed.error.message, listed.error.path]).toEqual([
      "not_directory",
      "ENOTDIR: not a directory, scandir '/w/f.txt'",
      "/w/f.txt",
    ]);
    // The directory reader opens with opendir in Node too.
    const opened = await env.openDirReader("f.txt", none);
    expect(opened.ok ? undefined : opened.error.message).toBe("ENOTDIR: not a directory, opendir '/w/f.txt'");
  });

  it("keeps the file system's order on Windows", async () => {
    const { agent, env } = setup("C:\\w");
    agent.remoteInfo = { ...agent.remoteInfo, os: "windows", cwd: "C:\\", home: "C:\\Users\\u" };
    agent.dirs.set("C:\\w\\d", [entry("b"), entry("a"), entry("C")]);
    const result = await env.listDir("d", none);
    expect(result.ok && result.value.map((info) => [info.name, info.path])).toEqual([
      ["b", "C:\\w\\d\\b"],
      ["a", "C:\\w\\d\\a"],
      ["C", "C:\\w\\d\\C"],
    ]);
  });

  it("checks abort before the listing and per entry", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("a"), entry("b")]);
    const before = await env.listDir("d", abortedContext());
    expect(before.ok ? undefined : [before.error.code, before.error.path]).toEqual(["aborted", "/w/d"]);
    expect(agent.calls).toEqual([]);
    const controller = new AbortController();
    agent.hooks.set("close", () => controller.abort());
    const during = await env.listDir("d", context(controller.signal));
    expect(during.ok ? undefined : [during.error.code, during.error.path]).toEqual(["aborted", "/w/d"]);
  });
});

describe("DirReader", () => {
  it("pages in directory order and fills each page after skipping vanished and unsupported entries", async () => {
    const { agent, env } = setup();
    const gone = (name: string): FakeEntry => ({ name, error: { code: "ENOENT", message: "ENOENT" } });
    agent.dirs.set("/w/d", [
      entry("z"),
      gone("g1"),
      entry("f", "other"),
      entry("a"),
      gone("g2"),
      entry("m"),
      entry("b"),
    ]);
    const opened = await env.openDirReader("d", none);
    if (!opened.ok) throw opened.error;
    const reader = opened.value;
    const first = await reader.next(2, none);
    expect(first.ok && [first.value.entries.map((info) => info.name), first.value.done]).toEqual([["z", "a"], false]);
    // z + vanished g1, then the unsupported f, then a: each request asks only for what the page still lacks.
    expect(agent.callsOf("readdir").map((call) => call.json.max)).toEqual([2, 1, 1]);
    const second = await reader.next(2, none);
    expect(second.ok && [second.value.entries.map((info) => info.path), second.value.done]).toEqual([
      ["/w/d/m", "/w/d/b"],
      false,
    ]);
    // The agent already said "done", but a full page cannot know it yet, exactly as Node's loop.
    expect(await reader.next(2, none)).toEqual({ ok: true, value: { entries: [], done: true } });
    expect(await reader.next(5, none)).toEqual({ ok: true, value: { entries: [], done: true } });
    expect(agent.callsOf("readdir")).toHaveLength(5);
    await reader.close(none);
    await reader.close(none);
    expect(agent.openHandles()).toBe(0);
  });

  it("reports done with a short last page", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("a"), entry("b"), entry("c")]);
    const opened = await env.openDirReader("d", none);
    if (!opened.ok) throw opened.error;
    const page = await opened.value.next(5, none);
    expect(page.ok && [page.value.entries.length, page.value.done]).toEqual([3, true]);
    expect(await opened.value.next(5, none)).toEqual({ ok: true, value: { entries: [], done: true } });
  });

  it("checks abort first, then closed, then maxEntries", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("a")]);
    const opened = await env.openDirReader("d", none);
    if (!opened.ok) throw opened.error;
    const reader = opened.value;
    for (const max of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
      const result = await reader.next(max, none);
      expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
        "invalid",
        "maxEntries must be a positive safe integer",
        "/w/d",
      ]);
    }
    expect(failedCode(await reader.next(0, abortedContext()))).toBe("aborted");
    await reader.close(none);
    const closed = await reader.next(1, none);
    expect(closed.ok ? undefined : [closed.error.code, closed.error.message]).toEqual([
      "invalid",
      "Directory reader is closed",
    ]);
    expect(failedCode(await reader.next(1, abortedContext()))).toBe("aborted");
  });

  it("fails a page on an entry error other than ENOENT, with the entry's path", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("a"), { name: "b", error: { code: "EACCES", message: "EACCES" } }]);
    const opened = await env.openDirReader("d", none);
    if (!opened.ok) throw opened.error;
    const page = await opened.value.next(10, none);
    expect(page.ok ? undefined : [page.error.code, page.error.path]).toEqual(["permission_denied", "/w/d/b"]);
  });

  it("checks abort after each readdir reply, and after opening (closing the directory)", async () => {
    const { agent, env } = setup();
    agent.dirs.set("/w/d", [entry("a"), entry("b")]);
    const controller = new AbortController();
    agent.hooks.set("opendir", () => controller.abort());
    const aborted = await env.openDirReader("d", context(controller.signal));
    expect(aborted.ok ? undefined : [aborted.error.code, aborted.error.path]).toEqual(["aborted", "/w/d"]);
    expect(agent.openHandles()).toBe(0);
    agent.hooks.delete("opendir");
    const again = new AbortController();
    const opened = await env.openDirReader("d", context(again.signal));
    if (!opened.ok) throw opened.error;
    agent.hooks.set("readdir", () => again.abort());
    expect(failedCode(await opened.value.next(1, context(again.signal)))).toBe("aborted");
  });

  it("refuses missing directories", async () => {
    const { env } = setup();
    const missing = await env.openDirReader("nope", none);
    expect(missing.ok ? undefined : [missing.error.code, missing.error.path]).toEqual(["not_found", "/w/nope"]);
  });
});

describe("BinaryReader", () => {
  async function openReader(env: RemoteExecutionEnv, path: string) {
    const opened = await env.openBinaryReader(path, undefined, none);
    if (!opened.ok) throw opened.error;
    return opened.value;
  }

  it("reads ranges in pipelined 256 KiB chunks into a plain Uint8Array", async () => {
    const { agent, env } = setup();
    const content = patterned(3 * 1024 * KiB + 17);
    agent.files.set("/w/f.bin", content);
    const reader = await openReader(env, "f.bin");
    // The window's floor, as above (the clock stopped).
    vi.useFakeTimers({ toFake: ["performance"] });
    const result = await reader.read(1_000_003, 2_000_000, none).finally(() => vi.useRealTimers());
    if (!result.ok) throw result.error;
    expect(Object.getPrototypeOf(result.value)).toBe(Uint8Array.prototype);
    expect(Buffer.compare(Buffer.from(result.value), Buffer.from(content.subarray(1_000_003, 3_000_003)))).toBe(0);
    const reads = agent.callsOf("pread").map((call) => call.json.length as number);
    expect(reads.every((length) => length <= 256 * KiB)).toBe(true);
    expect(reads.reduce((sum, length) => sum + length, 0)).toBe(2_000_000);
    expect(agent.maxInFlight.get("pread")).toBe(8);
    expect(agent.callsOf("pread").every((call) => call.session === 1)).toBe(true);
  });

  it("returns short reads only at EOF, and empty results as plain Uint8Arrays", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/d.txt", Buffer.from("hello world"));
    const reader = await openReader(env, "d.txt");
    const text = async (offset: number, length: number) => {
      const result = await reader.read(offset, length, none);
      if (!result.ok) throw result.error;
      expect(Object.getPrototypeOf(result.value)).toBe(Uint8Array.prototype);
      return Buffer.from(result.value).toString();
    };
    expect(await text(0, 5)).toBe("hello");
    expect(await text(6, 100)).toBe("world");
    expect(await text(11, 4)).toBe("");
    expect(await text(50, 1)).toBe("");
    const before = agent.callsOf("pread").length;
    expect(await text(3, 0)).toBe("");
    expect(agent.callsOf("pread").length).toBe(before);
    // A huge length reads to EOF without allocating it.
    expect(await text(0, Number.MAX_SAFE_INTEGER)).toBe("hello world");
  });

  it("validates after the abort and closed checks", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/d.txt", Buffer.from("hello world"));
    const reader = await openReader(env, "d.txt");
    for (const [offset, length] of [
      [-1, 1],
      [0, 1.5],
      [Number.NaN, 1],
      [0, 2 ** 53],
    ]) {
      const result = await reader.read(offset, length, none);
      expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
        "invalid",
        "Offset and length must be non-negative safe integers",
        "/w/d.txt",
      ]);
    }
    expect(failedCode(await reader.read(-1, 1, abortedContext()))).toBe("aborted");
    await reader.close(none);
    await reader.close(none);
    for (const result of [
      await reader.read(0, 1, none),
      await reader.info(none),
      await reader.scanLines({ startLine: 0 }, none),
    ]) {
      expect(result.ok ? undefined : [result.error.code, result.error.message]).toEqual([
        "invalid",
        "Binary reader is closed",
      ]);
    }
    expect(failedCode(await reader.read(0, 1, abortedContext()))).toBe("aborted");
    expect(agent.callsOf("close")).toHaveLength(1);
  });

  it("checks abort after each read and drops its data", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/f", patterned(2 * 1024 * KiB));
    const reader = await openReader(env, "f");
    const controller = new AbortController();
    agent.hooks.set("pread", () => controller.abort());
    const result = await reader.read(0, 10, context(controller.signal));
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual(["aborted", "/w/f"]);
  });

  it("reports info of the file as opened, under its original path", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/sub/data.txt", Buffer.from("hello world"));
    const reader = await openReader(env, "sub/../sub/data.txt");
    agent.files.set("/w/sub/data.txt", Buffer.from("hello world!!"));
    expect(await reader.info(none)).toEqual({
      ok: true,
      value: { name: "data.txt", path: "/w/sub/data.txt", kind: "file", size: 13, mtimeMs: 1_700_000_000_123.4568 },
    });
    expect(failedCode(await reader.info(abortedContext()))).toBe("aborted");
  });

  it("validates line ranges client-side and sends the scan with the abort signal", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/f", Buffer.from("abc\n"));
    const reader = await openReader(env, "f");
    for (const range of [
      { startLine: 2, endLine: 2 },
      { startLine: -1 },
      { startLine: 1.5 },
      { startLine: 0, endLine: Number.NaN },
      { startLine: 0, endLine: 2.5 },
    ]) {
      const result = await reader.scanLines(range, none);
      expect(result.ok ? undefined : [result.error.code, result.error.message]).toEqual([
        "invalid",
        "Invalid line range",
      ]);
    }
    expect(agent.callsOf("scanLines")).toEqual([]);
    const controller = new AbortController();
    const scan = await reader.scanLines(
      { startLine: 0, endLine: Number.POSITIVE_INFINITY },
      context(controller.signal),
    );
    expect(scan).toEqual({
      ok: true,
      value: { newlines: 1, start: 0, end: 3, firstLineEnd: 3, lastLineStart: 0, selectedBytes: 3, firstLineBytes: 3 },
    });
    await reader.scanLines({ startLine: 1, endLine: 4 }, none);
    const calls = agent.callsOf("scanLines");
    expect(calls.map((call) => call.json)).toEqual([
      { startLine: 0, handle: 1 },
      { startLine: 1, endLine: 4, handle: 1 },
    ]);
    expect(calls[0].signal).toBe(controller.signal);
    agent.hooks.set("scanLines", () => {
      throw remoteError("aborted", "aborted");
    });
    expect(failedCode(await reader.scanLines({ startLine: 0 }, none))).toBe("aborted");
  });

  it("maps open refusals and checks abort after the open", async () => {
    const { agent, env } = setup();
    agent.hooks.set("open", (call) => {
      if (call.json.path === "/w/link") throw remoteError("SYMLINK", "Refusing to follow a symbolic link");
      if (call.json.path === "/w/fifo") throw remoteError("NOT_REGULAR", "Not a regular file");
      if (call.json.path === "/w/dir") throw remoteError("EISDIR", "EISDIR: illegal operation on a directory, read");
    });
    const link = await env.openBinaryReader("link", { noFollow: true }, none);
    expect(link.ok ? undefined : [link.error.code, link.error.path]).toEqual(["invalid", "/w/link"]);
    expect(agent.callsOf("open")[0].json).toEqual({ path: "/w/link", noFollow: true });
    expect(failedCode(await env.openBinaryReader("fifo", undefined, none))).toBe("invalid");
    expect(failedCode(await env.openBinaryReader("dir", {}, none))).toBe("is_directory");
    expect(failedCode(await env.openBinaryReader("missing", {}, none))).toBe("not_found");
    agent.hooks.delete("open");
    agent.files.set("/w/f", new Uint8Array(1));
    const controller = new AbortController();
    agent.hooks.set("open", () => controller.abort());
    expect(failedCode(await env.openBinaryReader("f", undefined, context(controller.signal)))).toBe("aborted");
    expect(agent.openHandles()).toBe(0);
  });
});

describe("TextLineReader and readTextLines", () => {
  it("splits on LF only across 64 KiB reads, dropping only a leading BOM", async () => {
    const { agent, env } = setup();
    const long = "é".repeat(40_000);
    const text = `\ufeffone\r\n\ntwo ${long}\n\ufeffthree\npartial`;
    agent.files.set("/w/t.txt", Buffer.from(text));
    const opened = await env.openTextLineReader("t.txt", none);
    if (!opened.ok) throw opened.error;
    const lines = [];
    for (;;) {
      const line = await opened.value.readLine(none);
      if (!line.ok) throw line.error;
      if (line.value === undefined) break;
      lines.push(line.value);
    }
    expect(lines).toEqual([
      { text: "one\r", terminated: true },
      { text: "", terminated: true },
      { text: `two ${long}`, terminated: true },
      { text: "\ufeffthree", terminated: true },
      { text: "partial", terminated: false },
    ]);
    expect(await opened.value.readLine(none)).toEqual({ ok: true, value: undefined });
    expect(agent.callsOf("pread").map((call) => [call.json.offset, call.json.length])).toEqual([
      [0, 64 * KiB],
      [64 * KiB, 64 * KiB],
      [Buffer.byteLength(text), 64 * KiB],
    ]);
    await opened.value.close(none);
    const closed = await opened.value.readLine(none);
    expect(closed.ok ? undefined : [closed.error.code, closed.error.message]).toEqual([
      "invalid",
      "Text line reader is closed",
    ]);
    expect(failedCode(await opened.value.readLine(abortedContext()))).toBe("aborted");
  });

  it("does not consume the bytes of a read that was followed by an abort", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/t", Buffer.from("a\nb\n"));
    const controller = new AbortController();
    const opened = await env.openTextLineReader("t", none);
    if (!opened.ok) throw opened.error;
    agent.hooks.set("pread", () => controller.abort());
    expect(failedCode(await opened.value.readLine(context(controller.signal)))).toBe("aborted");
    agent.hooks.delete("pread");
    expect(await opened.value.readLine(none)).toEqual({ ok: true, value: { text: "a", terminated: true } });
    expect(agent.callsOf("pread").map((call) => call.json.offset)).toEqual([0, 0]);
  });

  it("readTextLines returns [] for maxLines <= 0 without any check, and still opens for NaN", async () => {
    const { agent, env } = setup();
    expect(await env.readTextLines("missing", { maxLines: 0 }, abortedContext())).toEqual({ ok: true, value: [] });
    expect(await env.readTextLines("missing", { maxLines: -3 }, none)).toEqual({ ok: true, value: [] });
    expect(agent.calls).toEqual([]);
    expect(failedCode(await env.readTextLines("missing", { maxLines: Number.NaN }, none))).toBe("not_found");
    agent.files.set("/w/t", Buffer.from("1\n2\n3\n4"));
    expect(await env.readTextLines("t", { maxLines: Number.NaN }, none)).toEqual({ ok: true, value: [] });
    expect(await env.readTextLines("t", { maxLines: 1.5 }, none)).toEqual({ ok: true, value: ["1", "2"] });
    expect(await env.readTextLines("t", undefined, none)).toEqual({ ok: true, value: ["1", "2", "3", "4"] });
    expect(agent.openHandles()).toBe(0);
  });

  it("surfaces a read failure at readLine (directories, FIFOs) and closes the reader", async () => {
    const { agent, env } = setup();
    directoryOpenedForReading(agent, "/w/dir");
    const opened = await env.openTextLineReader("dir", none);
    expect(opened.ok).toBe(true);
    const lines = await env.readTextLines("dir", undefined, none);
    expect(lines.ok ? undefined : [lines.error.code, lines.error.path]).toEqual(["is_directory", "/w/dir"]);
    if (opened.ok) await opened.value.close(none);
    expect(agent.openHandles()).toBe(0);
  });
});

describe("handles across agent restarts", () => {
  it("fails requests on a handle of a lost session with unknown instead of reaching the new agent", async () => {
    const { agent, env } = setup();
    agent.files.set("/w/a.txt", Buffer.from("AAA"));
    const opened = await env.openBinaryReader("a.txt", undefined, none);
    if (!opened.ok) throw opened.error;
    const lines = await env.openTextLineReader("a.txt", none);
    if (!lines.ok) throw lines.error;
    agent.dirs.set("/w", [entry("a.txt")]);
    const dir = await env.openDirReader(".", none);
    if (!dir.ok) throw dir.error;
    agent.restart();
    const callsBefore = agent.calls.length;
    for (const result of [
      await opened.value.read(0, 3, none),
      await opened.value.info(none),
      await lines.value.readLine(none),
      await dir.value.next(1, none),
    ]) {
      expect(result.ok ? undefined : [result.error.code, result.error.message]).toEqual([
        "unknown",
        "outpost agent connection lost",
      ]);
    }
    expect(agent.calls.length).toBe(callsBefore);
    await opened.value.close(none);
    agent.files.set("/w/b.txt", Buffer.from("BBB"));
    const fresh = await env.openBinaryReader("b.txt", undefined, none);
    if (!fresh.ok) throw fresh.error;
    const read = await fresh.value.read(0, 3, none);
    expect(read.ok && Buffer.from(read.value).toString()).toBe("BBB");
  });

  it("fails a chunked write whose session was lost with unknown", async () => {
    const { agent, env } = setup();
    const request = agent.request.bind(agent);
    // The agent dies right after answering the opening write: every chunk on its handle must fail as lost.
    agent.request = async (op, json, options) => {
      const reply = await request(op, json, options);
      if (op === "write") agent.restart();
      return reply;
    };
    const result = await env.writeFile("f", patterned(3 * 512 * KiB), none);
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.path]).toEqual([
      "unknown",
      "outpost agent connection lost",
      "/w/f",
    ]);
    expect(agent.callsOf("writeChunk")).toEqual([]);
  });
});
