/**
 * The reader objects of the reference env: a strict-LF text line reader, a positional binary reader and a
 * paging directory reader. Each one checks the abort signal first, then whether it is closed.
 */
import type { Dir } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { lstat } from "node:fs/promises";
import { resolve } from "node:path";
import type {
  BinaryReader,
  Context,
  DirReader,
  FileError,
  FileInfo,
  LineScan,
  Result,
  TextLine,
  TextLineReader,
} from "@outpost/sdk";
import { err, FileError as FileErrorClass, ok, StreamDecoder } from "@outpost/sdk";
import { toFileInfo } from "./file-info.js";
import { LineScanner } from "./line-scanner.js";
import { abortedFileError, toFileError } from "./to-file-error.js";

/** Size of one positional read of the text line reader and of `scanLines`. */
export const LINE_READ_CHUNK = 64 * 1024;
/** Largest single read of `BinaryReader.read`. */
export const BINARY_READ_CHUNK = 1024 * 1024;

function isAborted(context: Context): boolean {
  return context.abortSignal?.aborted === true;
}

async function closeQuietly(handle: FileHandle): Promise<void> {
  try {
    await handle.close();
  } catch {
    // Closing is best effort, as in Durable.
  }
}

/** Reads one file line by line through positional 64 KiB reads; only LF ends a line. */
export class NodeTextLineReader implements TextLineReader {
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #decoder = new StreamDecoder();
  #offset = 0;
  #text = "";
  /** Where to continue looking for a newline in `#text` (everything before has none). */
  #searchFrom = 0;
  #eof = false;
  #closed = false;

  constructor(handle: FileHandle, path: string) {
    this.#handle = handle;
    this.#path = path;
  }

  /** Returns the next line, `undefined` at end of file. */
  async readLine(context: Context): Promise<Result<TextLine | undefined, FileError>> {
    if (isAborted(context)) return err(abortedFileError(this.#path));
    if (this.#closed) return err(new FileErrorClass("invalid", "Text line reader is closed", this.#path));
    try {
      for (;;) {
        const newline = this.#text.indexOf("\n", this.#searchFrom);
        if (newline !== -1) {
          const text = this.#text.slice(0, newline);
          this.#text = this.#text.slice(newline + 1);
          this.#searchFrom = 0;
          return ok({ text, terminated: true });
        }
        this.#searchFrom = this.#text.length;
        if (this.#eof) {
          if (this.#text === "") return ok(undefined);
          const text = this.#text;
          this.#text = "";
          this.#searchFrom = 0;
          return ok({ text, terminated: false });
        }
        const buffer = Buffer.allocUnsafe(LINE_READ_CHUNK);
        const { bytesRead } = await this.#handle.read(buffer, 0, LINE_READ_CHUNK, this.#offset);
        // The bytes just read are not consumed, so a retry after an abort reads them again.
        if (isAborted(context)) return err(abortedFileError(this.#path));
        this.#offset += bytesRead;
        if (bytesRead === 0) {
          this.#text += this.#decoder.decode();
          this.#eof = true;
        } else {
          this.#text += this.#decoder.decode(buffer.subarray(0, bytesRead));
        }
      }
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Closes the file; idempotent, never fails. */
  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#text = "";
    await closeQuietly(this.#handle);
  }
}

/** Positional reads of one opened regular file; it keeps reading that file after the path is renamed. */
export class NodeBinaryReader implements BinaryReader {
  readonly #handle: FileHandle;
  readonly #path: string;
  #closed = false;

  constructor(handle: FileHandle, path: string) {
    this.#handle = handle;
    this.#path = path;
  }

  /** Metadata of the opened file, named by the path it was opened under. */
  async info(context: Context): Promise<Result<FileInfo, FileError>> {
    const closed = this.#refuse(context);
    if (closed !== undefined) return err(closed);
    try {
      const stats = await this.#handle.stat();
      const info = toFileInfo(this.#path, stats);
      return info === undefined ? err(new FileErrorClass("invalid", "Unsupported file type", this.#path)) : ok(info);
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Up to `length` bytes at `offset`; fewer only at end of file. */
  async read(offset: number, length: number, context: Context): Promise<Result<Uint8Array, FileError>> {
    const closed = this.#refuse(context);
    if (closed !== undefined) return err(closed);
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
      return err(new FileErrorClass("invalid", "Offset and length must be non-negative safe integers", this.#path));
    }
    try {
      const pieces: Uint8Array[] = [];
      let collected = 0;
      while (collected < length) {
        const want = Math.min(length - collected, BINARY_READ_CHUNK);
        const buffer = Buffer.allocUnsafe(want);
        const { bytesRead } = await this.#handle.read(buffer, 0, want, offset + collected);
        if (isAborted(context)) return err(abortedFileError(this.#path));
        if (bytesRead === 0) break;
        pieces.push(buffer.subarray(0, bytesRead));
        collected += bytesRead;
      }
      // A plain Uint8Array (not a Buffer), as Durable returns.
      const bytes = new Uint8Array(collected);
      let at = 0;
      for (const piece of pieces) {
        bytes.set(piece, at);
        at += piece.length;
      }
      return ok(bytes);
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Locates lines `[startLine, endLine)` in one pass over the whole file. */
  async scanLines(
    options: { startLine: number; endLine?: number },
    context: Context,
  ): Promise<Result<LineScan, FileError>> {
    const closed = this.#refuse(context);
    if (closed !== undefined) return err(closed);
    let scanner: LineScanner;
    try {
      scanner = new LineScanner(options.startLine, options.endLine);
    } catch {
      return err(new FileErrorClass("invalid", "Invalid line range", this.#path));
    }
    try {
      const buffer = Buffer.allocUnsafe(LINE_READ_CHUNK);
      for (let position = 0; ; ) {
        const { bytesRead } = await this.#handle.read(buffer, 0, LINE_READ_CHUNK, position);
        if (isAborted(context)) return err(abortedFileError(this.#path));
        if (bytesRead === 0) return ok(scanner.finish());
        scanner.push(buffer.subarray(0, bytesRead));
        position += bytesRead;
      }
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Closes the file; idempotent, never fails. */
  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await closeQuietly(this.#handle);
  }

  /** The abort check, then the closed check — in that order. */
  #refuse(context: Context): FileError | undefined {
    if (isAborted(context)) return abortedFileError(this.#path);
    if (this.#closed) return new FileErrorClass("invalid", "Binary reader is closed", this.#path);
    return undefined;
  }
}

/** Pages through one directory in the order the file system yields entries. */
export class NodeDirReader implements DirReader {
  readonly #dir: Dir;
  readonly #path: string;
  #done = false;
  #closed = false;

  constructor(dir: Dir, path: string) {
    this.#dir = dir;
    this.#path = path;
  }

  /** Up to `maxEntries` entries; entries removed meanwhile and unsupported kinds are skipped and not counted. */
  async next(maxEntries: number, context: Context): Promise<Result<{ entries: FileInfo[]; done: boolean }, FileError>> {
    if (isAborted(context)) return err(abortedFileError(this.#path));
    if (this.#closed) return err(new FileErrorClass("invalid", "Directory reader is closed", this.#path));
    if (!Number.isSafeInteger(maxEntries) || maxEntries <= 0) {
      return err(new FileErrorClass("invalid", "maxEntries must be a positive safe integer", this.#path));
    }
    const entries: FileInfo[] = [];
    while (!this.#done && entries.length < maxEntries) {
      let entry: { name: string } | null;
      try {
        entry = await this.#dir.read();
      } catch (error) {
        return err(toFileError(error, this.#path));
      }
      if (entry === null) {
        this.#done = true;
        break;
      }
      // An abort here loses the entry just read.
      if (isAborted(context)) return err(abortedFileError(this.#path));
      const entryPath = resolve(this.#path, entry.name);
      try {
        const info = toFileInfo(entryPath, await lstat(entryPath));
        if (info !== undefined) entries.push(info);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") continue;
        return err(toFileError(error, entryPath));
      }
    }
    return ok({ entries, done: this.#done });
  }

  /** Closes the directory; idempotent, never fails. */
  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#dir.close();
    } catch {
      // Best effort, as in Durable.
    }
  }
}
