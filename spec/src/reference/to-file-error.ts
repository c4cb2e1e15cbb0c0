/** Conversion of anything a Node file call throws into a `FileError`, as Durable's `toFileError` does. */
import { FileError, type FileErrorCode } from "./errors.js";
import { toError } from "./result.js";

/** Node error codes with a dedicated `FileError` code; every other code (and a non-Node error) is `unknown`. */
const CODES: ReadonlyMap<string, FileErrorCode> = new Map<string, FileErrorCode>([
  ["ABORT_ERR", "aborted"],
  ["ENOENT", "not_found"],
  ["EACCES", "permission_denied"],
  ["EPERM", "permission_denied"],
  ["ENOTDIR", "not_directory"],
  ["EISDIR", "is_directory"],
  ["EINVAL", "invalid"],
]);

/**
 * Maps a thrown value to a `FileError`. A `FileError` passes through unchanged. The reported path is the Node
 * error's own `path` when it has one (so a failed `mkdir` of a parent names the parent), else `fallbackPath`.
 */
export function toFileError(thrown: unknown, fallbackPath?: string): FileError {
  if (thrown instanceof FileError) return thrown;
  const error = toError(thrown);
  const fields = error as Error & { code?: unknown; path?: unknown };
  const path = typeof fields.path === "string" ? fields.path : fallbackPath;
  const code = typeof fields.code === "string" ? (CODES.get(fields.code) ?? "unknown") : "unknown";
  return new FileError(code, error.message, path, error);
}

/** The failure an abort checkpoint returns. */
export function abortedFileError(path: string | undefined): FileError {
  return new FileError("aborted", "aborted", path);
}
