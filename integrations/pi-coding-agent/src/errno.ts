/**
 * Node-style errors from an env's `FileError`s. pi prints some errors to the model verbatim (`read` shows the
 * message of a failed `access`, `edit` shows `Error code: <errno>`), so the adapters throw what Node's `fs` would
 * throw: an `Error` with `code` (the errno name), `syscall`, `path` and a message in Node's format.
 */
import { constants } from "node:os";
import type { FileError, FileErrorCode } from "@outpost/sdk";

/** A Node system error as `fs` throws it. */
export interface NodeStyleError extends Error {
  code: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

/** The errno name Node would report when a `FileError` carries none of its own. */
const ERRNO_OF_CODE: Partial<Record<FileErrorCode, string>> = {
  not_found: "ENOENT",
  permission_denied: "EACCES",
  not_directory: "ENOTDIR",
  is_directory: "EISDIR",
  invalid: "EINVAL",
};

/** libuv's descriptions, used only when the env's message does not carry one. */
const DESCRIPTION: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "not a directory",
  EISDIR: "illegal operation on a directory",
  EINVAL: "invalid argument",
  EEXIST: "file already exists",
  ELOOP: "too many symbolic links encountered",
};

const ERRNO_NAME = /^E[A-Z0-9]+$/;
const NODE_MESSAGE = /^(E[A-Z0-9]+): (.*?)(?:, [a-z]+(?: '.*')?)?$/s;

/** The errno name of a failure: the cause's (the agent's or Node's), else the one Node maps to its code. */
export function errnoOf(error: FileError): string | undefined {
  const causeCode = (error.cause as { code?: unknown } | undefined)?.code;
  if (typeof causeCode === "string" && ERRNO_NAME.test(causeCode)) return causeCode;
  const parsed = NODE_MESSAGE.exec(error.message);
  if (parsed) return parsed[1];
  return ERRNO_OF_CODE[error.code];
}

/**
 * Turns a `FileError` into the error Node's `fs` throws. With `syscall`, the message is rebuilt for that call
 * (`ENOENT: no such file or directory, access '/x'`), for calls the env makes differently than pi's local code
 * (an `access` done by opening the file); without it, the env's own message is kept (it is already Node's).
 */
export function toNodeError(error: FileError, call?: { syscall: string; path?: string }): NodeStyleError {
  const code = errnoOf(error);
  if (code === undefined) return Object.assign(new Error(error.message, { cause: error }), { code: "UNKNOWN" });
  let message = error.message;
  if (call !== undefined) {
    const description = NODE_MESSAGE.exec(error.message)?.[2] ?? DESCRIPTION[code] ?? error.message;
    message = `${code}: ${description}, ${call.syscall}${call.path === undefined ? "" : ` '${call.path}'`}`;
  }
  const errno = (constants.errno as Record<string, number | undefined>)[code];
  const nodeError: NodeStyleError = Object.assign(new Error(message, { cause: error }), { code });
  if (errno !== undefined) nodeError.errno = -errno;
  if (call !== undefined) nodeError.syscall = call.syscall;
  const path = call?.path ?? error.path;
  if (path !== undefined) nodeError.path = path;
  return nodeError;
}

/** The context an env call takes, from the abort signal pi hands a tool. */
export function contextOf(signal: AbortSignal | undefined): { abortSignal: AbortSignal | undefined } {
  return { abortSignal: signal };
}
