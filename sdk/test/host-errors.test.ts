// The `errors` option: with a host's own FileError/ExecutionError classes (stand-ins with Durable's constructor
// signatures), every failure an env returns — file ops, readers, exec with timeout/abort/spill, watch, listFiles —
// is an instance of the host's classes, against the real agent. Without the option, Outpost's own classes.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ExecutionError, type ExecutionErrorCode, FileError, type FileErrorCode } from "../src/contract/errors.js";
import type { Result } from "../src/contract/result.js";
import type { WatchChange } from "../src/contract/types.js";
import { LocalExecutionEnv } from "../src/env/local-env.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { Connection } from "../src/wire/connection.js";
import { realAgent } from "./fixtures/real-agent.js";

/** A host's FileError: Durable's constructor and shape (`path?`), and no relation to Outpost's class. */
class HostFileError extends Error {
  override name = "FileError";
  code: FileErrorCode;
  path?: string;
  constructor(code: FileErrorCode, message: string, path?: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.path = path;
  }
}

/** A host's ExecutionError: Durable's constructor signature; `spillPath` is assigned after construction. */
class HostExecutionError extends Error {
  override name = "ExecutionError";
  code: ExecutionErrorCode;
  spillPath?: string;
  constructor(code: ExecutionErrorCode, message: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

const errors = { FileError: HostFileError, ExecutionError: HostExecutionError };
const context = { abortSignal: undefined };

/** The failure of `result`, which must have failed. */
function failure<E>(result: Result<unknown, E>): E {
  if (result.ok) throw new Error("expected a failure, got a success");
  return result.error;
}

/** Asserts a host FileError with `code` (and not Outpost's class). */
function expectHostFileError(error: unknown, code: FileErrorCode): void {
  expect(error).toBeInstanceOf(HostFileError);
  expect(error).not.toBeInstanceOf(FileError);
  expect((error as HostFileError).code).toBe(code);
}

function expectHostExecutionError(error: unknown, code: ExecutionErrorCode): HostExecutionError {
  expect(error).toBeInstanceOf(HostExecutionError);
  expect(error).not.toBeInstanceOf(ExecutionError);
  expect((error as HostExecutionError).code).toBe(code);
  return error as HostExecutionError;
}

let dir: string;
let env: LocalExecutionEnv;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-host-errors-"));
  writeFileSync(join(dir, "file.txt"), "one\ntwo\n");
  mkdirSync(join(dir, "sub"));
  env = new LocalExecutionEnv({ cwd: dir, agentPath: realAgent, errors });
});

afterEach(async () => {
  await env.close();
  await rm(dir, { recursive: true, force: true });
});

describe("file operations with the host's classes", () => {
  it("every method's failure, with the code, message, path and cause the env gives without the option", async () => {
    const plain = new LocalExecutionEnv({ cwd: dir, agentPath: realAgent });
    const ops: [string, (e: LocalExecutionEnv) => Promise<Result<unknown, FileError>>][] = [
      ["readTextFile", (e) => e.readTextFile("missing.txt", context)],
      ["readBinaryFile", (e) => e.readBinaryFile("sub", context)],
      ["readTextLines", (e) => e.readTextLines("missing.txt", undefined, context)],
      ["writeFile", (e) => e.writeFile("file.txt/x", "a", context)],
      ["appendFile", (e) => e.appendFile("sub", "a", context)],
      ["truncateFile", (e) => e.truncateFile("file.txt", -1, context)],
      ["flushFile", (e) => e.flushFile("missing.txt", context)],
      ["renameFile", (e) => e.renameFile("missing.txt", "b", context)],
      ["fileInfo", (e) => e.fileInfo("missing.txt", context)],
      ["listDir", (e) => e.listDir("file.txt", context)],
      ["exists", (e) => e.exists("file.txt/x", context)],
      ["canonicalPath", (e) => e.canonicalPath("missing.txt", context)],
      ["createDir", (e) => e.createDir("file.txt/x", undefined, context)],
      ["remove", (e) => e.remove("missing.txt", undefined, context)],
      ["a NUL byte", (e) => e.readTextFile("a\0b", context)],
      ["createTempDir", (e) => e.createTempDir("x\0", context)],
      ["openTextLineReader", (e) => e.openTextLineReader("missing.txt", context)],
      ["openBinaryReader", (e) => e.openBinaryReader("missing.txt", undefined, context)],
      ["openDirReader", (e) => e.openDirReader("missing", context)],
    ];
    try {
      for (const [name, op] of ops) {
        const own = failure(await op(plain));
        const hosted = failure(await op(env));
        expect(own, name).toBeInstanceOf(FileError);
        expectHostFileError(hosted, own.code);
        expect([hosted.message, hosted.path, hosted.cause], name).toEqual([own.message, own.path, own.cause]);
      }
      // Its path holds a random name, so only the code is comparable.
      expectHostFileError(failure(await env.createTempFile({ prefix: "x\0" }, context)), "unknown");
    } finally {
      await plain.close();
    }
  });

  it("an aborted call and a lost agent", async () => {
    const controller = new AbortController();
    controller.abort();
    expectHostFileError(failure(await env.readTextFile("file.txt", { abortSignal: controller.signal })), "aborted");
    expectHostFileError(failure(await env.createTempDir(undefined, { abortSignal: controller.signal })), "aborted");
    const unstartable = new LocalExecutionEnv({ cwd: dir, agentPath: join(dir, "file.txt"), errors });
    try {
      expectHostFileError(failure(await unstartable.fileInfo("file.txt", context)), "unknown");
      expectHostFileError(failure(await unstartable.joinPath(["a"], context)), "unknown");
    } finally {
      await unstartable.close();
    }
  });

  it("the readers' own failures", async () => {
    const lines = await env.openTextLineReader("file.txt", context);
    if (!lines.ok) throw lines.error;
    await lines.value.close(context);
    expectHostFileError(failure(await lines.value.readLine(context)), "invalid");

    const binary = await env.openBinaryReader("file.txt", undefined, context);
    if (!binary.ok) throw binary.error;
    expectHostFileError(failure(await binary.value.read(-1, 1, context)), "invalid");
    expectHostFileError(failure(await binary.value.scanLines({ startLine: -1 }, context)), "invalid");
    await binary.value.close(context);
    expectHostFileError(failure(await binary.value.info(context)), "invalid");

    const entries = await env.openDirReader("sub", context);
    if (!entries.ok) throw entries.error;
    expectHostFileError(failure(await entries.value.next(0, context)), "invalid");
    await entries.value.close(context);
    expectHostFileError(failure(await entries.value.next(1, context)), "invalid");
  });

  it("listFiles: an invalid option and a missing root", async () => {
    expectHostFileError(failure(await env.listFiles(".", { limit: 0 }, context)), "invalid");
    expectHostFileError(failure(await env.listFiles("missing", undefined, context)), "not_found");
  });

  it("watch: refused at open when aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const refused = await env.watch([{ path: "." }], () => {}, { abortSignal: controller.signal });
    expectHostFileError(failure(refused), "aborted");
  });
});

/** Whether the agent can run as nobody here (root, and the agent reachable for nobody). */
function asNobody(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", realAgent, "--version"];
  return spawnSync("setpriv", probe).status === 0;
}

it.runIf(asNobody())("watch: the final error a live watcher delivers", async () => {
  // Root reads everything, so the agent runs as nobody and the watched directory becomes unreadable.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "open"), { mode: 0o777 });
  const connection = new Connection({
    command: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", realAgent],
  });
  const remote = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir, errors });
  try {
    const seen: WatchChange[] = [];
    let wake = () => {};
    const watched = await remote.watch(
      [{ path: "open" }],
      (change) => {
        seen.push(change);
        wake();
      },
      context,
    );
    if (!watched.ok) throw watched.error;
    chmodSync(join(dir, "open"), 0o000);
    const deadline = Date.now() + 5_000;
    while (!seen.some((change) => "error" in change) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, deadline - Date.now());
      });
    }
    const last = seen.at(-1);
    expectHostFileError(last !== undefined && "error" in last ? last.error : last, "permission_denied");
    await watched.value.close(context);
  } finally {
    await connection.close();
  }
});

describe("exec with the host's classes", () => {
  it("timeout keeps the spill path, assigned after construction", async () => {
    const result = await env.exec(
      "yes | head -c 100000; sleep 5",
      { timeout: 0.5, spill: { afterBytes: 10, afterLines: 10 } },
      context,
    );
    const error = expectHostExecutionError(failure(result), "timeout");
    expect(error.message).toBe("timeout:0.5");
    expect(typeof error.spillPath).toBe("string");
  });

  it("abort, invalid timeout, a failing callback, an unreachable agent", async () => {
    const controller = new AbortController();
    const running = env.exec("sleep 5", { onOutput: () => {} }, { abortSignal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    expectHostExecutionError(failure(await running), "aborted");
    expectHostExecutionError(failure(await env.exec("true", { timeout: -1 }, context)), "timeout");
    const throwing = () => {
      throw new Error("callback failure");
    };
    const failed = failure(await env.exec("echo hi", { onOutput: throwing }, context));
    expect(expectHostExecutionError(failed, "callback_error").cause).toBeInstanceOf(Error);
    const unstartable = new LocalExecutionEnv({ cwd: dir, agentPath: join(dir, "file.txt"), errors });
    try {
      expectHostExecutionError(failure(await unstartable.exec("true", undefined, context)), "unknown");
    } finally {
      await unstartable.close();
    }
  });
});

it("without the option, Outpost's own classes, the same objects as before", async () => {
  const plain = new LocalExecutionEnv({ cwd: dir, agentPath: realAgent });
  try {
    const missing = failure(await plain.readTextFile("missing.txt", context));
    expect(missing).toBeInstanceOf(FileError);
    expect(failure(await plain.exec("true", { timeout: -1 }, context))).toBeInstanceOf(ExecutionError);
  } finally {
    await plain.close();
  }
});
