/**
 * The abort table of spec/semantics.md (A3), row by row, with the abort landing while an agent request is in
 * flight — after the entry checkpoint passed. A method with a checkpoint after that request fails `aborted` (and
 * closes what it opened); a method whose only checkpoint is at entry lets the request finish and succeeds (A5).
 * The in-memory agent's hooks fire while it serves a request. The same aborts against real envs, made to wait on
 * a FIFO, are conformance cases (spec/src/conformance/abort-in-flight.ts).
 */
import { describe, expect, it } from "vitest";
import type { FileError } from "../src/contract/errors.js";
import type { Result } from "../src/contract/result.js";
import type { Context } from "../src/contract/types.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { FakeAgent, remoteError, wireInfo } from "./remote-env.fake.js";

const none: Context = { abortSignal: undefined };
const text = (value: string) => new Uint8Array(Buffer.from(value));

/** One row: what to prepare, which request the abort lands in, the call, and what must come out. */
interface Row {
  /** The method and the request in flight. */
  name: string;
  /** The agent op during which the signal fires. */
  during: string;
  /** Prepares the agent (and possibly opens a reader with a live context); returns the call under test. */
  prepare(
    agent: FakeAgent,
    env: RemoteExecutionEnv,
  ): Promise<(context: Context) => Promise<Result<unknown, FileError>>>;
  /** `aborted` with this path, or success when the method has no checkpoint after the request. */
  expect: { aborted: string; message?: string } | "success";
  /** More checks on the agent afterwards. */
  after?(agent: FakeAgent): void;
}

function env(agent: FakeAgent): RemoteExecutionEnv {
  return new RemoteExecutionEnv({ connection: agent.connection(), id: "outpost:test", cwd: "/w" });
}

const file = (agent: FakeAgent, content = "a\nb\n") => agent.files.set("/w/f", text(content));
const dir = (agent: FakeAgent) =>
  agent.dirs.set("/w/d", [
    { name: "x", info: wireInfo("file", 1) },
    { name: "y", info: wireInfo("file", 1) },
  ]);
type Call = (env: RemoteExecutionEnv, context: Context) => Promise<Result<unknown, FileError>>;
/** A row's `prepare` that puts the file `/w/f` on the agent. */
const onFile: (call: Call, content?: string) => Row["prepare"] = (call, content) => async (agent, env) => {
  file(agent, content);
  return (context) => call(env, context);
};
/** A row's `prepare` that puts the directory `/w/d` (two files) on the agent. */
const onDir: (call: Call) => Row["prepare"] = (call) => async (agent, env) => {
  dir(agent);
  return (context) => call(env, context);
};
const noHandles = (agent: FakeAgent) => expect(agent.openHandles()).toBe(0);
/** Nothing was read (a read of a FIFO would consume its data) and the file was closed. */
const noReads = (agent: FakeAgent) => {
  expect(agent.callsOf("pread")).toEqual([]);
  noHandles(agent);
};

const rows: Row[] = [
  {
    name: "openTextLineReader, during open",
    during: "open",
    prepare: onFile((env, context) => env.openTextLineReader("f", context)),
    expect: { aborted: "/w/f" },
    after: noHandles,
  },
  {
    name: "readTextLines, during open",
    during: "open",
    prepare: onFile((env, context) => env.readTextLines("f", undefined, context)),
    expect: { aborted: "/w/f" },
    after: noHandles,
  },
  {
    name: "readTextLines, during the first read",
    during: "pread",
    prepare: onFile((env, context) => env.readTextLines("f", { maxLines: 5 }, context)),
    expect: { aborted: "/w/f" },
    after: noHandles,
  },
  {
    name: "TextLineReader.readLine, during a read",
    during: "pread",
    prepare: async (agent, env) => {
      file(agent);
      const reader = await env.openTextLineReader("f", none);
      if (!reader.ok) throw reader.error;
      return (context) => reader.value.readLine(context);
    },
    expect: { aborted: "/w/f" },
  },
  {
    name: "readTextFile, during open (Node's checkpoint before fstat: no read follows)",
    during: "open",
    prepare: onFile((env, context) => env.readTextFile("f", context)),
    expect: { aborted: "/w/f", message: "The operation was aborted" },
    after: noReads,
  },
  {
    name: "readBinaryFile, during open (Node's checkpoint before fstat: no read follows)",
    during: "open",
    prepare: onFile((env, context) => env.readBinaryFile("f", context)),
    expect: { aborted: "/w/f", message: "The operation was aborted" },
    after: noReads,
  },
  {
    name: "readTextFile, during an open whose fstat failed (the abort is checked before the stat result)",
    during: "open",
    prepare: async (agent, env) => {
      file(agent);
      agent.statErrors.set("/w/f", { code: "EIO", message: "EIO: i/o error, fstat" });
      return (context) => env.readTextFile("f", context);
    },
    expect: { aborted: "/w/f", message: "The operation was aborted" },
    after: noHandles,
  },
  {
    name: "readTextFile, during its only read (no checkpoint after the last read)",
    during: "pread",
    prepare: onFile((env, context) => env.readTextFile("f", context)),
    expect: "success",
    after: noHandles,
  },
  {
    name: "writeFile, during the opening write (the agent sees the cancel after its open)",
    during: "write",
    prepare: async (agent, env) => {
      agent.hooks.set("write", (call) => {
        if (call.signal?.aborted === true) throw remoteError("aborted", "The operation was aborted");
      });
      return (context) => env.writeFile("f", "content", context);
    },
    expect: { aborted: "/w/f", message: "The operation was aborted" },
    after: (agent) => expect(agent.files.has("/w/f")).toBe(false),
  },
  {
    name: "appendFile, during the write (the append happens, then the checkpoint)",
    during: "write",
    prepare: onFile((env, context) => env.appendFile("f", "+new", context), "old"),
    expect: { aborted: "/w/f" },
    after: (agent) => expect(Buffer.from(agent.files.get("/w/f") ?? []).toString()).toBe("old+new"),
  },
  {
    name: "truncateFile, during ftruncate",
    during: "truncate",
    prepare: onFile((env, context) => env.truncateFile("f", 1, context)),
    expect: { aborted: "/w/f" },
  },
  {
    name: "flushFile, during fsync",
    during: "fsync",
    prepare: onFile((env, context) => env.flushFile("f", context)),
    expect: { aborted: "/w/f" },
  },
  {
    name: "listDir, while the entries are read (checkpoint before each entry)",
    during: "readdir",
    prepare: onDir((env, context) => env.listDir("d", context)),
    expect: { aborted: "/w/d" },
    after: noHandles,
  },
  {
    name: "openDirReader, during opendir",
    during: "opendir",
    prepare: onDir((env, context) => env.openDirReader("d", context)),
    expect: { aborted: "/w/d" },
    after: noHandles,
  },
  {
    name: "DirReader.next, during readdir",
    during: "readdir",
    prepare: async (agent, env) => {
      dir(agent);
      const reader = await env.openDirReader("d", none);
      if (!reader.ok) throw reader.error;
      return (context) => reader.value.next(2, context);
    },
    expect: { aborted: "/w/d" },
  },
  {
    name: "openBinaryReader, during open",
    during: "open",
    prepare: onFile((env, context) => env.openBinaryReader("f", undefined, context)),
    expect: { aborted: "/w/f" },
    after: noHandles,
  },
  {
    name: "BinaryReader.read, during a read",
    during: "pread",
    prepare: async (agent, env) => {
      file(agent);
      const reader = await env.openBinaryReader("f", undefined, none);
      if (!reader.ok) throw reader.error;
      return (context) => reader.value.read(0, 2, context);
    },
    expect: { aborted: "/w/f" },
  },
  {
    name: "BinaryReader.scanLines, during the scan (the agent checks between reads and answers aborted)",
    during: "scanLines",
    prepare: async (agent, env) => {
      file(agent);
      agent.hooks.set("scanLines", (call) => {
        if (call.signal?.aborted === true) throw remoteError("aborted", "aborted");
      });
      const reader = await env.openBinaryReader("f", undefined, none);
      if (!reader.ok) throw reader.error;
      return (context) => reader.value.scanLines({ startLine: 1 }, context);
    },
    expect: { aborted: "/w/f" },
  },
  entryOnly("fileInfo", "lstat", (env, context) => env.fileInfo("f", context)),
  entryOnly("exists", "lstat", (env, context) => env.exists("f", context)),
  entryOnly("canonicalPath", "realpath", (env, context) => env.canonicalPath("f", context)),
  entryOnly("createDir", "mkdir", (env, context) => env.createDir("n", undefined, context)),
  entryOnly("remove", "rm", (env, context) => env.remove("f", undefined, context)),
  entryOnly("renameFile", "rename", (env, context) => env.renameFile("f", "g", context)),
  entryOnly("createTempDir", "mkdtemp", (env, context) => env.createTempDir("p-", context)),
  entryOnly("createTempFile", "mkdtemp", (env, context) => env.createTempFile(undefined, context)),
  entryOnly("createTempFile", "write", (env, context) => env.createTempFile(undefined, context)),
];

/** A method whose only checkpoint is at entry: an abort during its request changes nothing. */
function entryOnly(method: string, during: string, call: Call): Row {
  return {
    name: `${method}, during ${during} (entry checkpoint only)`,
    during,
    prepare: onFile(call),
    expect: "success",
  };
}

describe("an abort while the agent serves a request (A3)", () => {
  for (const row of rows) {
    it(row.name, async () => {
      const agent = new FakeAgent();
      const subject = env(agent);
      const call = await row.prepare(agent, subject);
      const controller = new AbortController();
      const served = agent.hooks.get(row.during);
      let fired = 0;
      agent.hooks.set(row.during, async (request, index) => {
        fired++;
        controller.abort();
        await served?.(request, index);
      });
      const result = await call({ abortSignal: controller.signal });
      expect(fired, `the abort fired during ${row.during}`).toBeGreaterThan(0);
      if (row.expect === "success") expect(result.ok ? "success" : result.error).toBe("success");
      else {
        expect(result.ok ? "success" : [result.error.code, result.error.path]).toEqual(["aborted", row.expect.aborted]);
        if (row.expect.message !== undefined && !result.ok) expect(result.error.message).toBe(row.expect.message);
      }
      row.after?.(agent);
    });
  }
});
