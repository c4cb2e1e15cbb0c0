/**
 * The reference env's own error classes, shaped as Durable's (`durable-env.md` §1.2): constructor arguments,
 * `name`, `code`, `path` and `spillPath` as there. Declared here, not imported, so the oracle shares no code with the
 * SDK it checks; the two classes are structurally the same, so either satisfies the other's `ExecutionEnv` type.
 */

/** Why a file operation failed (Durable's `FileErrorCode`; `not_supported` is never produced by the reference). */
export type FileErrorCode =
  | "aborted"
  | "not_found"
  | "permission_denied"
  | "not_directory"
  | "is_directory"
  | "invalid"
  | "not_supported"
  | "unknown";

/** Why a command failed (Durable's `ExecutionErrorCode`). */
export type ExecutionErrorCode =
  | "aborted"
  | "timeout"
  | "shell_unavailable"
  | "spawn_error"
  | "callback_error"
  | "unknown";

/** Builds the standard `Error` options: a cause is recorded only when one is given. */
function causeOption(cause: Error | undefined): ErrorOptions | undefined {
  if (cause === undefined) return undefined;
  return { cause };
}

/** A file operation that failed: its code, a message, and the path concerned (always assigned, maybe undefined). */
export class FileError extends Error {
  override readonly name = "FileError";
  code: FileErrorCode;
  path: string | undefined;

  constructor(code: FileErrorCode, message: string, path?: string, cause?: Error) {
    super(message, causeOption(cause));
    this.path = path;
    this.code = code;
  }
}

/** A command that failed; `spillPath` is set afterwards when a spilled command timed out or was aborted. */
export class ExecutionError extends Error {
  override readonly name = "ExecutionError";
  code: ExecutionErrorCode;
  spillPath?: string;

  constructor(code: ExecutionErrorCode, message: string, cause?: Error) {
    super(message, causeOption(cause));
    this.code = code;
  }
}
