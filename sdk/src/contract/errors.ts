/** Codes of a failed file operation; identical to Durable's `FileErrorCode`. */
export type FileErrorCode =
  | "aborted"
  | "not_found"
  | "permission_denied"
  | "not_directory"
  | "is_directory"
  | "invalid"
  | "not_supported"
  | "unknown";

/** Codes of a failed command; identical to Durable's `ExecutionErrorCode`. */
export type ExecutionErrorCode =
  | "aborted"
  | "timeout"
  | "shell_unavailable"
  | "spawn_error"
  | "callback_error"
  | "unknown";

/** A failed file operation: a stable `code`, a diagnostic `message`, and the path it concerns. */
export class FileError extends Error {
  override readonly name = "FileError";
  code: FileErrorCode;
  path: string | undefined;

  constructor(code: FileErrorCode, message: string, path?: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.path = path;
  }
}

/** A failed command: a stable `code`, a message, and the spill file of a command that timed out or was aborted. */
export class ExecutionError extends Error {
  override readonly name = "ExecutionError";
  code: ExecutionErrorCode;
  spillPath?: string;

  constructor(code: ExecutionErrorCode, message: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}
