// The same-host shortcut (sdk/src/wire/same-host.ts): LocalExecutionEnv's whole-file reads and writes move their bytes
// through the agent's open file reopened by this process, with the results and abort points of the pipe path.
import { chmod, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hostPlatform } from "../src/env/agent-binary.js";
import { LocalExecutionEnv } from "../src/env/local-env.js";
import { type RemoteInfo, toRemoteInfo } from "../src/wire/agent-hello.js";
import type { Connection } from "../src/wire/connection.js";
import { HANDLE_FD_FEATURE, reopenAgentFile, sameHostFdDir } from "../src/wire/same-host.js";
import { patterned } from "./fixtures/patterned.js";

const linux = process.platform === "linux";
const agentPath =
  process.env.OUTPOST_AGENT || join(import.meta.dirname, "..", "bin", `${hostPlatform()}-${process.arch}`, "outpost");
const context = { abortSignal: undefined };
const MiB = 1024 * 1024;

/** Every request the env makes, as `op` or `op+fd` when it asked for a descriptor. */
function recordRequests(connection: Connection): string[] {
  const seen: string[] = [];
  const request = connection.request.bind(connection);
  connection.request = (op, json, options) => {
    seen.push(json.fd === true ? `${op}+fd` : op);
    return request(op, json, options);
  };
  return seen;
}

/** A hello answer of a Linux agent offering the shortcut, with `fields` over it. */
function info(fields: Record<string, unknown>): RemoteInfo {
  return toRemoteInfo({ os: "linux", features: [HANDLE_FD_FEATURE], ...fields });
}

describe.runIf(linux)("sameHostFdDir", () => {
  it("takes the agent's pid when it is the spawned process or its child, and nothing else", () => {
    expect(sameHostFdDir(process.pid, info({ pid: process.pid }))).toBe(`/proc/${process.pid}/fd`);
    // The Linux agent serves from a child of the guardian this process spawned.
    expect(sameHostFdDir(process.ppid, info({ pid: process.pid }))).toBe(`/proc/${process.pid}/fd`);
    expect(sameHostFdDir(process.pid + 1, info({ pid: process.pid }))).toBeUndefined();
    expect(sameHostFdDir(undefined, info({ pid: process.pid }))).toBeUndefined();
    expect(sameHostFdDir(process.pid, info({ pid: 0 }))).toBeUndefined();
    expect(sameHostFdDir(process.pid, info({ pid: process.pid, features: ["readFile"] }))).toBeUndefined();
  });

  it("reopens only a descriptor number it can open, and never throws", async () => {
    const dir = await mkdtemp(join(tmpdir(), "outpost-samehost-"));
    const file = await open(join(dir, "f"), "w+");
    try {
      const reply = (fd: unknown) => ({ json: { handle: 1, fd }, payload: new Uint8Array(), session: 1 });
      const reopened = await reopenAgentFile(`/proc/${process.pid}/fd`, reply(file.fd), "read");
      expect(reopened).toBeDefined();
      await reopened?.close();
      expect(await reopenAgentFile(undefined, reply(file.fd), "read")).toBeUndefined();
      expect(await reopenAgentFile(`/proc/${process.pid}/fd`, reply(undefined), "read")).toBeUndefined();
      expect(await reopenAgentFile(`/proc/${process.pid}/fd`, reply(-1), "read")).toBeUndefined();
      expect(await reopenAgentFile(`/proc/${process.pid}/fd`, reply(1.5), "read")).toBeUndefined();
      expect(await reopenAgentFile(join(dir, "missing"), reply(file.fd), "w")).toBeUndefined();
    } finally {
      await file.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(linux)("LocalExecutionEnv's same-host shortcut", () => {
  let root: string;
  const envs: LocalExecutionEnv[] = [];
  const made = (options: ConstructorParameters<typeof LocalExecutionEnv>[0] = {}) => {
    const env = new LocalExecutionEnv({ cwd: root, agentPath, ...options });
    envs.push(env);
    return env;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "outpost-samehost-"));
  });
  afterEach(async () => {
    for (const env of envs.splice(0)) await env.close();
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes, appends and reads files over one chunk through `env`; checks the bytes against the disk. */
  async function roundTrip(env: LocalExecutionEnv, name: string): Promise<void> {
    const content = patterned(3 * MiB + 1, 7);
    const more = patterned(2 * MiB + 5, 9);
    expect((await env.writeFile(name, content, context)).ok).toBe(true);
    expect(Buffer.compare(await readFile(join(root, name)), content)).toBe(0);
    expect((await env.appendFile(name, more, context)).ok).toBe(true);
    const disk = await readFile(join(root, name));
    expect(Buffer.compare(disk, Buffer.concat([content, more]))).toBe(0);
    const bytes = await env.readBinaryFile(name, context);
    expect(bytes.ok && Buffer.compare(bytes.value, disk)).toBe(0);
    const text = await env.readTextFile(name, context);
    expect(text.ok && text.value === disk.toString("utf8")).toBe(true);
  }

  it("moves the bytes of files over one request through its own descriptor", async () => {
    const env = made();
    const seen = recordRequests(env.connection);
    await roundTrip(env, "big.bin");
    expect(env.connection.sameHostFdDir()).toMatch(/^\/proc\/\d+\/fd$/);
    // The agent opens (and writes the first chunk); no chunk and no read crosses the pipe.
    expect(seen.filter((op) => op !== "close")).toEqual(["write+fd", "write+fd", "readFile+fd", "readFile+fd"]);
    // A file that fits one request is still read and written in one.
    seen.length = 0;
    expect((await env.writeFile("small.txt", "hello", context)).ok).toBe(true);
    expect(await env.readTextFile("small.txt", context)).toEqual({ ok: true, value: "hello" });
    expect(seen).toEqual(["write", "readFile+fd"]);
  });

  it("stops a local chunked write at Node's checkpoint, leaving a prefix of the content", async () => {
    const env = made();
    const controller = new AbortController();
    const probe = await open(join(root, "probe"), "w");
    const prototype = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const write = prototype.write;
    let writes = 0;
    // The caller gives up while the third local chunk is written: Node finishes the piece it started and
    // writes no other, so the file holds the first piece (written by the agent) and the three after it.
    prototype.write = function (this: unknown, ...args: unknown[]) {
      if (++writes === 3) controller.abort();
      return write.apply(this, args);
    };
    const content = patterned(40 * 512 * 1024, 3);
    let result: Awaited<ReturnType<LocalExecutionEnv["writeFile"]>>;
    try {
      result = await env.writeFile("partial.bin", content, { abortSignal: controller.signal });
    } finally {
      prototype.write = write;
    }
    expect(result.ok ? undefined : [result.error.code, result.error.path]).toEqual([
      "aborted",
      join(root, "partial.bin"),
    ]);
    expect(writes).toBe(3);
    const written = await readFile(join(root, "partial.bin"));
    expect(written.length).toBe(4 * 512 * 1024);
    expect(Buffer.compare(written, content.subarray(0, written.length))).toBe(0);
  });

  it("keeps the bytes on the pipe when the descriptor cannot be reopened", async () => {
    const env = made();
    const seen = recordRequests(env.connection);
    await env.connection.info();
    // As for another user's agent, or /proc mounted with hidepid: the reopen fails.
    env.connection.sameHostFdDir = () => join(root, "no-such-dir");
    await roundTrip(env, "fallback.bin");
    expect(seen).toContain("writeChunk");
    expect(seen).toContain("pread");
  });

  it("is not taken for an agent started by a wrapper that forks it", async () => {
    const wrapper = join(root, "wrapper.sh");
    // No exec: the agent is the wrapper's child, so its pid and its guardian's are not the spawned process's.
    await writeFile(wrapper, `#!/bin/sh\n'${agentPath.replaceAll("'", "'\\''")}' "$@"\n`);
    await chmod(wrapper, 0o755);
    const env = made({ agentPath: wrapper });
    const seen = recordRequests(env.connection);
    await roundTrip(env, "wrapped.bin");
    expect(env.connection.sameHostFdDir()).toBeUndefined();
    expect(seen.some((op) => op.endsWith("+fd"))).toBe(false);
    expect(seen).toContain("pread");
  });
});
