import { readFileSync, renameSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ExecutionError, FileError } from "../src/contract/errors.js";
import {
  abortedError,
  fileErrorCode,
  fileErrorFromFields,
  isAborted,
  nulByteError,
  toFileError,
} from "../src/contract/file-errors.js";
import { RemoteError } from "../src/wire/connection.js";

describe("fileErrorCode", () => {
  it("maps agent codes like NodeExecutionEnv's toFileError (plus pi-env's own codes)", () => {
    const table: [string, string][] = [
      ["ENOENT", "not_found"],
      ["EACCES", "permission_denied"],
      ["EPERM", "permission_denied"],
      ["ENOTDIR", "not_directory"],
      ["EISDIR", "is_directory"],
      ["EINVAL", "invalid"],
      ["SYMLINK", "invalid"],
      ["NOT_REGULAR", "invalid"],
      ["aborted", "aborted"],
      ["ABORT_ERR", "aborted"],
      ["EEXIST", "unknown"],
      ["ENOTEMPTY", "unknown"],
      ["ELOOP", "unknown"],
      ["EXDEV", "unknown"],
      ["EMFILE", "unknown"],
      ["EBADF", "unknown"],
      ["ESPIPE", "unknown"],
      ["ERR_FS_EISDIR", "unknown"],
      ["UNKNOWN", "unknown"],
      ["spawn_error", "unknown"],
      ["unknown", "unknown"],
      ["toString", "unknown"],
      ["constructor", "unknown"],
    ];
    for (const [code, expected] of table) expect([code, fileErrorCode(code)]).toEqual([code, expected]);
  });
});

describe("toFileError", () => {
  it("passes a FileError through unchanged", () => {
    const original = new FileError("invalid", "bad", "/p");
    expect(toFileError(original, "/other")).toBe(original);
  });

  it("maps an agent error frame, preferring the frame's path over the fallback", () => {
    const remote = new RemoteError({
      code: "ENOTDIR",
      message: "ENOTDIR: not a directory, mkdir '/a/f'",
      path: "/a/f",
    });
    const mapped = toFileError(remote, "/a/f/x");
    expect(mapped).toBeInstanceOf(FileError);
    expect(mapped.code).toBe("not_directory");
    expect(mapped.message).toBe("ENOTDIR: not a directory, mkdir '/a/f'");
    expect(mapped.path).toBe("/a/f");
    expect(mapped.cause).toBe(remote);
  });

  it("uses the fallback path when the frame has none (handle operations)", () => {
    const mapped = toFileError(
      new RemoteError({ code: "EISDIR", message: "EISDIR: illegal operation on a directory, read" }),
      "/d",
    );
    expect([mapped.code, mapped.path]).toEqual(["is_directory", "/d"]);
  });

  it("turns a lost connection into unknown with its message", () => {
    const lost = new RemoteError({ code: "unknown", message: "outpost agent connection lost", lost: true });
    const mapped = toFileError(lost, "/f");
    expect([mapped.code, mapped.message, mapped.path]).toEqual(["unknown", "outpost agent connection lost", "/f"]);
  });

  it("turns a failed start (spawn_error) into unknown carrying the start's message", () => {
    const start = new RemoteError({
      code: "spawn_error",
      message: "ssh gpu-box failed: Network is unreachable",
      lost: true,
    });
    expect([toFileError(start).code, toFileError(start).message]).toEqual([
      "unknown",
      "ssh gpu-box failed: Network is unreachable",
    ]);
  });

  it("maps an agent-side abort and an AbortError to aborted", () => {
    expect(toFileError(new RemoteError({ code: "aborted", message: "aborted" }), "/f").code).toBe("aborted");
    const controller = new AbortController();
    controller.abort();
    const abortError = (() => {
      try {
        controller.signal.throwIfAborted();
      } catch (error) {
        return error;
      }
    })();
    expect(toFileError(abortError, "/f").code).toBe("aborted");
  });

  it("maps Node's own errors by code, like Node's toFileError", () => {
    let thrown: unknown;
    try {
      readFileSync("/definitely/missing/file");
    } catch (error) {
      thrown = error;
    }
    const mapped = toFileError(thrown, "/fallback");
    expect([mapped.code, mapped.path]).toEqual(["not_found", "/definitely/missing/file"]);
  });

  it("makes anything else unknown, with Durable's toError message", () => {
    expect([toFileError("boom").code, toFileError("boom").message]).toEqual(["unknown", "boom"]);
    expect(toFileError({ a: 1 }, "/p").message).toBe('{"a":1}');
    expect(toFileError(undefined).message).toBe("");
    expect(toFileError(new Error("plain"), "/p").path).toBe("/p");
  });
});

describe("fileErrorFromFields", () => {
  it("maps an error object carried inside a reply", () => {
    const error = fileErrorFromFields({ code: "EACCES", message: "EACCES: permission denied, fstat" }, "/f");
    expect([error.code, error.message, error.path]).toEqual([
      "permission_denied",
      "EACCES: permission denied, fstat",
      "/f",
    ]);
    const bare = fileErrorFromFields({}, undefined);
    expect([bare.code, bare.message, bare.path]).toEqual(["unknown", "Remote operation failed", undefined]);
    expect(fileErrorFromFields({ code: "ENOENT", message: "m", path: "/own" }, "/f").path).toBe("/own");
  });
});

describe("abort helpers", () => {
  it("build the aborted failure and test the signal", () => {
    const error = abortedError("/p");
    expect([error.code, error.message, error.path]).toEqual(["aborted", "aborted", "/p"]);
    expect(abortedError(undefined, "The operation was aborted").message).toBe("The operation was aborted");
    const controller = new AbortController();
    expect(isAborted(undefined)).toBe(false);
    expect(isAborted(controller.signal)).toBe(false);
    controller.abort();
    expect(isAborted(controller.signal)).toBe(true);
  });
});

describe("nulByteError", () => {
  function nodeMessage(run: () => void): string {
    try {
      run();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("Node accepted a NUL byte");
  }

  it("reproduces Node's ERR_INVALID_ARG_VALUE message and is unknown", () => {
    const error = nulByteError("path", "/tmp/a\u0000b", "/tmp/a\u0000b");
    expect(error.code).toBe("unknown");
    expect(error.path).toBe("/tmp/a\u0000b");
    expect(error.message).toBe(nodeMessage(() => readFileSync("/tmp/a\u0000b")));
    expect(nulByteError("oldPath", "/x\u0000", "/x\u0000").message).toBe(
      nodeMessage(() => renameSync("/x\u0000", "/y")),
    );
    expect(nulByteError("newPath", "/y\u0000", "/x").message).toBe(nodeMessage(() => renameSync("/x", "/y\u0000")));
  });

  it("names the prefix for mkdtemp", async () => {
    const message = await mkdtemp("/tmp/p\u0000-").then(
      () => "",
      (error: Error) => error.message,
    );
    expect(nulByteError("prefix", "/tmp/p\u0000-", undefined).message).toBe(message);
  });
});

describe("the error classes", () => {
  it("carry a cause only when one was given, as Node's own errors do", () => {
    const cause = new Error("below");
    expect(Object.hasOwn(new FileError("unknown", "m", "/p"), "cause")).toBe(false);
    expect(new FileError("unknown", "m", "/p", cause).cause).toBe(cause);
    expect(Object.hasOwn(new ExecutionError("unknown", "m"), "cause")).toBe(false);
    expect(new ExecutionError("unknown", "m", cause).cause).toBe(cause);
  });
});
