/**
 * The readers `RemoteExecutionEnv` hands out, each over one agent handle: a positional binary reader, a strict-LF
 * text line reader and a directory reader. Their checkpoints and validation follow `NodeExecutionEnv`'s readers:
 * the abort check comes first, then the closed check, then argument validation.
 */
import { StreamDecoder } from "../contract/decode.js";
import { FileError } from "../contract/errors.js";
import { abortedError, fileErrorCode, fileErrorFromFields, isAborted, toFileError } from "../contract/file-errors.js";
import { basenameOnAgent, type PathRules, resolveOnAgent } from "../contract/paths.js";
import { err, ok, type Result } from "../contract/result.js";
import type {
  BinaryReader,
  Context,
  DirReader,
  FileInfo,
  LineScan,
  TextLine,
  TextLineReader,
} from "../contract/types.js";
import { fileInfo, infoOfReply, isRepresentable, parseEntries, parseLineScan, type WireEntry } from "../wire/wire.js";
import type { RemoteHandle } from "./handle.js";
import { chunksBetween, type ReadAhead, sizedReadAhead } from "./read-ahead.js";

/** Bytes of one `BinaryReader.read` request to the agent. */
export const BINARY_READ_CHUNK = 256 * 1024;
/** Bytes of one `TextLineReader` read, as Node's line reader. */
export const LINE_CHUNK = 64 * 1024;

function invalid(message: string, path: string): FileError {
  return new FileError("invalid", message, path);
}

/** `LineScanner`'s range rule: a non-negative safe integer start, and an end above it (a safe integer or +∞). */
export function isValidLineRange(startLine: number, endLine: number | undefined): boolean {
  if (!Number.isSafeInteger(startLine) || startLine < 0) return false;
  if (endLine === undefined) return true;
  return endLine > startLine && (endLine === Number.POSITIVE_INFINITY || Number.isSafeInteger(endLine));
}

/** Positional reads of one regular file opened on the agent; it keeps reading that file after renames. */
export class RemoteBinaryReader implements BinaryReader {
  readonly #handle: RemoteHandle;
  readonly #path: string;
  readonly #name: string;
  #closed = false;

  /** `path` is the resolved path the file was opened by; `info()` reports it even after a rename. */
  constructor(handle: RemoteHandle, path: string, rules: PathRules) {
    this.#handle = handle;
    this.#path = path;
    this.#name = basenameOnAgent(rules, path);
  }

  async info(context: Context): Promise<Result<FileInfo, FileError>> {
    const failure = this.#refusal(context);
    if (failure !== undefined) return err(failure);
    try {
      const info = infoOfReply((await this.#handle.request("fstat")).json);
      if (!isRepresentable(info)) return err(invalid("Unsupported file type", this.#path));
      return ok(fileInfo(info, this.#name, this.#path));
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  async read(offset: number, length: number, context: Context): Promise<Result<Uint8Array, FileError>> {
    const signal = context.abortSignal;
    const failure = this.#refusal(context);
    if (failure !== undefined) return err(failure);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
      return err(invalid("Offset and length must be non-negative safe integers", this.#path));
    }
    // As many requests in flight as the path needs (8 to 32, read-ahead.ts).
    const ahead = sizedReadAhead((at, count) => this.#handle.pread(at, count), BINARY_READ_CHUNK);
    try {
      return await this.#readRange(ahead, offset, length, signal);
    } catch (error) {
      return err(toFileError(error, this.#path));
    } finally {
      await ahead.settle();
    }
  }

  /** Node's loop: read, check abort (dropping the data), stop at an empty read; a short read just continues. */
  async #readRange(
    ahead: ReadAhead,
    offset: number,
    length: number,
    signal: AbortSignal | undefined,
  ): Promise<Result<Uint8Array, FileError>> {
    const end = offset + length;
    const pieces: Uint8Array[] = [];
    let collected = 0;
    while (collected < length) {
      const position = offset + collected;
      const count = Math.min(length - collected, BINARY_READ_CHUNK);
      const bytes = await ahead.read(position, count, chunksBetween(position + count, end, BINARY_READ_CHUNK));
      if (isAborted(signal)) return err(abortedError(this.#path));
      if (bytes.length === 0) break;
      pieces.push(bytes);
      collected += bytes.length;
    }
    // A plain Uint8Array (not a Buffer), as Node's reader returns.
    const out = new Uint8Array(collected);
    let at = 0;
    for (const piece of pieces) {
      out.set(piece, at);
      at += piece.length;
    }
    return ok(out);
  }

  async scanLines(
    options: { startLine: number; endLine?: number },
    context: Context,
  ): Promise<Result<LineScan, FileError>> {
    const signal = context.abortSignal;
    const failure = this.#refusal(context);
    if (failure !== undefined) return err(failure);
    const { startLine, endLine } = options;
    if (!isValidLineRange(startLine, endLine)) return err(invalid("Invalid line range", this.#path));
    // +∞ has no JSON form; an absent endLine means "to the end".
    const range =
      endLine === undefined || endLine === Number.POSITIVE_INFINITY ? { startLine } : { startLine, endLine };
    try {
      const reply = await this.#handle.request("scanLines", range, signal === undefined ? {} : { signal });
      return ok(parseLineScan(reply.json));
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }

  #refusal(context: Context): FileError | undefined {
    if (isAborted(context.abortSignal)) return abortedError(this.#path);
    if (this.#closed) return invalid("Binary reader is closed", this.#path);
    return undefined;
  }
}

/**
 * Reads a text file line by line: 64 KiB positional reads decoded by a `StreamDecoder` (leading byte-order mark
 * dropped, WHATWG replacement), split on LF only.
 */
export class RemoteTextLineReader implements TextLineReader {
  readonly #handle: RemoteHandle;
  readonly #path: string;
  readonly #decoder = new StreamDecoder();
  #text = "";
  /** Start of the unreturned text in `#text`. */
  #start = 0;
  /** Where to look for the next newline (everything before it was searched already). */
  #searchFrom = 0;
  #offset = 0;
  #eof = false;
  #closed = false;

  constructor(handle: RemoteHandle, path: string) {
    this.#handle = handle;
    this.#path = path;
  }

  async readLine(context: Context): Promise<Result<TextLine | undefined, FileError>> {
    const signal = context.abortSignal;
    if (isAborted(signal)) return err(abortedError(this.#path));
    if (this.#closed) return err(invalid("Text line reader is closed", this.#path));
    try {
      for (;;) {
        const line = this.#takeLine();
        if (line !== undefined || this.#eof) return ok(line);
        const bytes = await this.#handle.pread(this.#offset, LINE_CHUNK);
        // The bytes of an aborted read are not consumed: a later call reads them again.
        if (isAborted(signal)) return err(abortedError(this.#path));
        this.#offset += bytes.length;
        this.#append(bytes.length === 0 ? this.#decoder.decode() : this.#decoder.decode(bytes));
        if (bytes.length === 0) this.#eof = true;
      }
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** The next complete line, or at end of file the unterminated rest; `undefined` when more bytes are needed. */
  #takeLine(): TextLine | undefined {
    const newline = this.#text.indexOf("\n", this.#searchFrom);
    if (newline >= 0) {
      const text = this.#text.slice(this.#start, newline);
      this.#start = newline + 1;
      this.#searchFrom = this.#start;
      return { text, terminated: true };
    }
    this.#searchFrom = this.#text.length;
    if (!this.#eof || this.#start === this.#text.length) return undefined;
    const text = this.#text.slice(this.#start);
    this.#text = "";
    this.#start = 0;
    this.#searchFrom = 0;
    return { text, terminated: false };
  }

  #append(decoded: string): void {
    this.#text = this.#text.slice(this.#start) + decoded;
    this.#searchFrom -= this.#start;
    this.#start = 0;
  }

  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#text = "";
    this.#start = 0;
    this.#searchFrom = 0;
    await this.#handle.close();
  }
}

/**
 * Pages through a directory in the order the file system yields it. Entries removed meanwhile (ENOENT) and kinds
 * a `FileInfo` cannot hold are skipped, and the agent is asked again so every page is filled after skipping.
 */
export class RemoteDirReader implements DirReader {
  readonly #handle: RemoteHandle;
  readonly #path: string;
  readonly #rules: PathRules;
  #closed = false;
  /** The agent reported the end; the reader reports it once a page comes up short, as Node's loop would. */
  #endSeen = false;
  #done = false;
  /**
   * Entries the agent sent that no page has taken yet: a failing entry ends a page, and those after it belong to
   * the next one, as in Node's loop, which reads one entry at a time.
   */
  #pending: WireEntry[] = [];

  constructor(handle: RemoteHandle, path: string, rules: PathRules) {
    this.#handle = handle;
    this.#path = path;
    this.#rules = rules;
  }

  async next(maxEntries: number, context: Context): Promise<Result<{ entries: FileInfo[]; done: boolean }, FileError>> {
    const signal = context.abortSignal;
    if (isAborted(signal)) return err(abortedError(this.#path));
    if (this.#closed) return err(invalid("Directory reader is closed", this.#path));
    if (!Number.isSafeInteger(maxEntries) || maxEntries <= 0) {
      return err(invalid("maxEntries must be a positive safe integer", this.#path));
    }
    const entries: FileInfo[] = [];
    while (entries.length < maxEntries && !this.#done) {
      const entry = this.#pending.shift();
      if (entry === undefined) {
        if (this.#endSeen) {
          // Node learns of the end only by asking for one more entry, which it does only while the page has room.
          this.#done = true;
          break;
        }
        const page = await this.#fetch(maxEntries - entries.length);
        if (!page.ok) return page;
        this.#pending = page.value.entries;
        // An empty page that does not say "done" would repeat forever; it can only mean the end.
        if (page.value.done || page.value.entries.length === 0) this.#endSeen = true;
        continue;
      }
      // Node checks after reading each entry: an abort loses the entry just read, not the ones after it.
      if (isAborted(signal)) return err(abortedError(this.#path));
      const kept = this.#entryInfo(entry);
      if (kept instanceof FileError) return err(kept);
      if (kept !== undefined) entries.push(kept);
    }
    return ok({ entries, done: this.#done });
  }

  async #fetch(max: number): Promise<Result<{ entries: WireEntry[]; done: boolean }, FileError>> {
    try {
      const reply = await this.#handle.request("readdir", { max });
      return ok({ entries: parseEntries(reply.json), done: reply.json.done === true });
    } catch (error) {
      return err(toFileError(error, this.#path));
    }
  }

  /** The entry's `FileInfo`, `undefined` to skip it (vanished or unsupported kind), or the error that fails the page. */
  #entryInfo(entry: WireEntry): FileInfo | FileError | undefined {
    const path = resolveOnAgent(this.#rules, this.#path, entry.name);
    if (entry.error !== undefined) {
      const code = typeof entry.error.code === "string" ? entry.error.code : "unknown";
      return fileErrorCode(code) === "not_found" ? undefined : fileErrorFromFields(entry.error, path);
    }
    if (entry.info === undefined || !isRepresentable(entry.info)) return undefined;
    return fileInfo(entry.info, basenameOnAgent(this.#rules, path), path);
  }

  async close(_context: Context): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}
