/**
 * Turning agent failures into `FileError`s the way `NodeExecutionEnv`'s `toFileError` turns Node errors into them:
 * same code table, the error's own path when it has one, else the operation's fallback path.
 */
import { inspect } from "node:util";
import { FileError, type FileErrorCode } from "./errors.js";
import { toError } from "./result.js";

/** Message of the env's own abort checkpoints (Durable's `"aborted"`). */
export const ABORTED_MESSAGE = "aborted";

/** Message of the checkpoints Node's `readFile`/`writeFile` take themselves (an `AbortError`). */
export const NODE_ABORTED_MESSAGE = "The operation was aborted";

/** Agent (errno-style) codes and the `FileError` code each becomes; anything missing becomes `unknown`. */
const CODE_TABLE: Readonly<Record<string, FileErrorCode>> = {
  aborted: "aborted",
  ABORT_ERR: "aborted",
  ENOENT: "not_found",
  EACCES: "permission_denied",
  EPERM: "permission_denied",
  ENOTDIR: "not_directory",
  EISDIR: "is_directory",
  EINVAL: "invalid",
  SYMLINK: "invalid",
  NOT_REGULAR: "invalid",
};

/** The `FileError` code of an agent error code (`ENOENT` → `not_found`, …; unknown codes → `unknown`). */
export function fileErrorCode(code: string): FileErrorCode {
  return Object.hasOwn(CODE_TABLE, code) ? CODE_TABLE[code] : "unknown";
}

/** An error that carries a string `code`, like the Connection's `RemoteError` or a Node system error. */
interface CodedError extends Error {
  code: string;
  path?: unknown;
}

function isCodedError(error: unknown): error is CodedError {
  return error instanceof Error && typeof (error as { code?: unknown }).code === "string";
}

/**
 * Maps anything an operation threw to a `FileError`: a `FileError` passes through unchanged; an error with a
 * `code` (the agent's `RemoteError`, including a lost connection) is mapped by the code table; anything else is
 * `unknown`. The path is the error's own `path` when it is a string, else `fallbackPath`.
 */
export function toFileError(error: unknown, fallbackPath?: string): FileError {
  if (error instanceof FileError) return error;
  if (isCodedError(error)) {
    const path = typeof error.path === "string" ? error.path : fallbackPath;
    if (error.name === "AbortError") return new FileError("aborted", error.message, path, error);
    return new FileError(fileErrorCode(error.code), error.message, path, error);
  }
  const cause = toError(error);
  if (cause.name === "AbortError") return new FileError("aborted", cause.message, fallbackPath, cause);
  return new FileError("unknown", cause.message, fallbackPath, cause);
}

/**
 * A `FileError` from an error object the agent put inside a successful reply (`statError` of `open`), with the
 * same mapping as an error frame.
 */
export function fileErrorFromFields(fields: Record<string, unknown>, fallbackPath?: string): FileError {
  const code = typeof fields.code === "string" ? fields.code : "unknown";
  const message = typeof fields.message === "string" ? fields.message : "Remote operation failed";
  const path = typeof fields.path === "string" ? fields.path : fallbackPath;
  return new FileError(fileErrorCode(code), message, path);
}

/** The failure of an abort checkpoint. */
export function abortedError(path: string | undefined, message: string = ABORTED_MESSAGE): FileError {
  return new FileError("aborted", message, path);
}

/** True when the signal has fired; the one test every abort checkpoint makes. */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * What Node throws for a path holding a NUL character (`ERR_INVALID_ARG_VALUE`, which `toFileError` maps to
 * `unknown`), e.g. "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '/a\x00'".
 * `argument` is the name Node validates (`path`, `oldPath`, `newPath`, `prefix`); `reported` is the FileError path.
 */
export function nulByteError(argument: string, value: string, reported: string | undefined): FileError {
  const message = `The argument '${argument}' must be a string, Uint8Array, or URL without null bytes. Received ${inspect(value)}`;
  return new FileError(
    "unknown",
    message,
    reported,
    Object.assign(new TypeError(message), { code: "ERR_INVALID_ARG_VALUE" }),
  );
}
