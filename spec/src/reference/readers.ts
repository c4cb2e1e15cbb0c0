/**
 * The reader objects of the reference env: a strict-LF text line reader, a positional binary reader and a
 * paging directory reader. Each one checks the abort signal first, then whether it is closed.
 */
import type { Dir } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { lstat } from "node:fs/promises";
import { resolve } from "node:path";
import { BomDroppingDecoder } from "./decode.js";
import { FileError } from "./errors.js";
import { toFileInfo } from "./file-info.js";
import { LineScanner } from "./line-scanner.js";
import { err, ok, type Result } from "./result.js";
import { abortedFileError, toFileError } from "./to-file-error.js";
import type { BinaryReader, Context, DirReader, FileInfo, LineScan, TextLine, TextLineReader } from "./types.js";

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

/**
 * Durable's "strict LF reader" (`durable-env.md` §2.5): decoded text waits in `#pending`; a line is handed out as
 * soon as an LF is in it, else the next 64 KiB are read at the reader's own byte offset. Only LF ends a line (a CR
 * stays in the text); the file's leading byte-order mark is dropped, later U+FEFF kept.
 */
export class NodeTextLineReader implements TextLineReader {
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #decoder = new BomDroppingDecoder();
  /** Decoded text not yet returned as lines. */
  #pending = "";
  /** How much of `#pending`, from its start, is known to hold no LF (so it is not searched again). */
  #scanned = 0;
  /** Byte offset of the next read. */
  #position = 0;
  #atEnd = false;
  #closed = false;

  constructor(handle: FileHandle, path: string) {
    this.#handle = handle;
    this.#path = path;
  }

  /** The next line; `undefined` once the file is exhausted (and on every call after that). */
  async readLine(context: Context): Promise<Result<TextLine | undefined, FileError>> {
    if (isAborted(context)) return err(abortedFileError(this.#path));
    if (this.#closed) return err(new FileError("invalid", "Text line reader is closed", this.#path));
    try {
      let line = this.#takeLine();
      while (line === null) {
        const filled = await this.#readMore(context);
        if (!filled) return err(abortedFileError(this.#path));
        line = this.#takeLine();
      }
      return ok(line);
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Closes the file; idempotent, never fails. */
  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = "";
    await closeQuietly(this.#handle);
  }

  /**
   * Removes and returns the first line of `#pending`: one ended by LF, or at end of file the unterminated rest
   * (`undefined` when nothing is left). `null` means more bytes must be read first.
   */
  #takeLine(): TextLine | undefined | null {
    const lf = this.#pending.indexOf("\n", this.#scanned);
    if (lf >= 0) {
      const text = this.#pending.substring(0, lf);
      this.#pending = this.#pending.substring(lf + 1);
      this.#scanned = 0;
      return { text, terminated: true };
    }
    this.#scanned = this.#pending.length;
    if (!this.#atEnd) return null;
    if (this.#pending.length === 0) return undefined;
    const rest = this.#pending;
    this.#pending = "";
    this.#scanned = 0;
    return { text: rest, terminated: false };
  }

  /**
   * Reads and decodes the next piece of the file; a read of 0 bytes ends the file and flushes the decoder.
   * Returns false when the context was aborted during the read: the offset is then not advanced, so the same bytes
   * are read again by the next call.
   */
  async #readMore(context: Context): Promise<boolean> {
    const chunk = Buffer.allocUnsafe(LINE_READ_CHUNK);
    const { bytesRead } = await this.#handle.read(chunk, 0, LINE_READ_CHUNK, this.#position);
    if (isAborted(context)) return false;
    this.#position += bytesRead;
    if (bytesRead > 0) {
      this.#pending += this.#decoder.write(chunk.subarray(0, bytesRead));
    } else {
      this.#pending += this.#decoder.end();
      this.#atEnd = true;
    }
    return true;
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
      return info === undefined ? err(new FileError("invalid", "Unsupported file type", this.#path)) : ok(info);
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** Up to `length` bytes at `offset`; fewer only at end of file. */
  async read(offset: number, length: number, context: Context): Promise<Result<Uint8Array, FileError>> {
    const closed = this.#refuse(context);
    if (closed !== undefined) return err(closed);
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
      return err(new FileError("invalid", "Offset and length must be non-negative safe integers", this.#path));
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
      return err(new FileError("invalid", "Invalid line range", this.#path));
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
    if (this.#closed) return new FileError("invalid", "Binary reader is closed", this.#path);
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
    if (this.#closed) return err(new FileError("invalid", "Directory reader is closed", this.#path));
    if (!Number.isSafeInteger(maxEntries) || maxEntries <= 0) {
      return err(new FileError("invalid", "maxEntries must be a positive safe integer", this.#path));
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
