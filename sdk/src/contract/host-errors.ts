/**
 * The host's error classes at the env boundary: a Durable host checks `error instanceof FileError` with its own
 * class, so an env given `errors: { FileError, ExecutionError }` rebuilds every failure it returns with them. Inside
 * the SDK failures stay Outpost's own classes (the mapping code relies on them); only what leaves the env changes.
 */
import type { ExecutionError, ExecutionErrorCode, FileError, FileErrorCode } from "./errors.js";
import { err, type Result } from "./result.js";
import type { BinaryReader, Context, DirReader, LineScan, TextLine, TextLineReader, WatchChange } from "./types.js";

/**
 * A host's `FileError` class, with Durable's constructor signature. Its instances need only Durable's shape (`path`
 * may be an optional property); the env's types keep calling them `FileError`, which they match at run time.
 */
export type FileErrorClass = new (
  code: FileErrorCode,
  message: string,
  path?: string,
  cause?: Error,
) => Error & { code: FileErrorCode; path?: string };

/**
 * A host's `ExecutionError` class, with Durable's constructor signature; `spillPath` is assigned after
 * construction, as Durable does.
 */
export type ExecutionErrorClass = new (
  code: ExecutionErrorCode,
  message: string,
  cause?: Error,
) => Error & { code: ExecutionErrorCode; spillPath?: string };

/** The `errors` option of the envs: the classes every failure an env returns is constructed with. */
export interface HostErrorClasses {
  FileError: FileErrorClass;
  ExecutionError: ExecutionErrorClass;
}

function causeOf(error: Error): Error | undefined {
  return error.cause instanceof Error ? error.cause : undefined;
}

/** Rebuilds an env's failures with the host's classes; without them, everything passes through unchanged. */
export class HostErrors {
  readonly #classes: HostErrorClasses | undefined;

  constructor(classes: HostErrorClasses | undefined) {
    this.#classes = classes;
  }

  /** `error` as an instance of the host's `FileError` (same code, message, path and cause). */
  file(error: FileError): FileError {
    const classes = this.#classes;
    // `as object`: the host class has our instance type, so a plain `instanceof` would narrow the rest to never.
    if (classes === undefined || (error as object) instanceof classes.FileError) return error;
    return new classes.FileError(error.code, error.message, error.path, causeOf(error)) as FileError;
  }

  /** `error` as an instance of the host's `ExecutionError`, its `spillPath` assigned after construction. */
  execution(error: ExecutionError): ExecutionError {
    const classes = this.#classes;
    if (classes === undefined || (error as object) instanceof classes.ExecutionError) return error;
    const rebuilt = new classes.ExecutionError(error.code, error.message, causeOf(error));
    if (error.spillPath !== undefined) rebuilt.spillPath = error.spillPath;
    return rebuilt as ExecutionError;
  }

  /** A failed file result with the host's class; successes unchanged. */
  fileResult<T>(result: Result<T, FileError>): Result<T, FileError> {
    return result.ok ? result : err(this.file(result.error));
  }

  /** A failed command result with the host's class; successes unchanged. */
  executionResult<T>(result: Result<T, ExecutionError>): Result<T, ExecutionError> {
    return result.ok ? result : err(this.execution(result.error));
  }

  /** The watch callback, its final error rebuilt with the host's class. */
  onChange(onChange: (change: WatchChange) => void): (change: WatchChange) => void {
    if (this.#classes === undefined) return onChange;
    return (change) => onChange("error" in change ? { error: this.file(change.error) } : change);
  }

  /** A binary reader whose failures use the host's class. */
  binaryReader(reader: BinaryReader): BinaryReader {
    if (this.#classes === undefined) return reader;
    return {
      info: async (context: Context) => this.fileResult(await reader.info(context)),
      read: async (offset: number, length: number, context: Context) =>
        this.fileResult(await reader.read(offset, length, context)),
      scanLines: async (
        options: { startLine: number; endLine?: number },
        context: Context,
      ): Promise<Result<LineScan, FileError>> => this.fileResult(await reader.scanLines(options, context)),
      close: (context: Context) => reader.close(context),
    };
  }

  /** A text line reader whose failures use the host's class. */
  textLineReader(reader: TextLineReader): TextLineReader {
    if (this.#classes === undefined) return reader;
    return {
      readLine: async (context: Context): Promise<Result<TextLine | undefined, FileError>> =>
        this.fileResult(await reader.readLine(context)),
      close: (context: Context) => reader.close(context),
    };
  }

  /** A directory reader whose failures use the host's class. */
  dirReader(reader: DirReader): DirReader {
    if (this.#classes === undefined) return reader;
    return {
      next: async (maxEntries: number, context: Context) => this.fileResult(await reader.next(maxEntries, context)),
      close: (context: Context) => reader.close(context),
    };
  }
}
