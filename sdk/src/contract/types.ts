/**
 * The `ExecutionEnv` contract, structurally identical to Durable's (`@earendil-works/pi-durable/env`), so an Outpost
 * env is accepted wherever Durable takes an `ExecutionEnv`.
 */
import type { ExecutionError, FileError } from "./errors.js";
import type { Result } from "./result.js";

/**
 * The only part of Durable's `Context` an env reads: its abort signal. Any object with this member is accepted —
 * chord's full `Context` (`telemetryContext`, `value(key)`, ...) included — and `exec` hands the same object, with
 * its own type, back to `onOutput`.
 */
export interface Context {
  readonly abortSignal: AbortSignal | undefined;
}

/** What a path names. Other kinds (FIFOs, sockets, devices) are not representable. */
export type FileKind = "file" | "directory" | "symlink";

/** Metadata of one path, never following a final symbolic link. */
export interface FileInfo {
  name: string;
  path: string;
  kind: FileKind;
  size: number;
  mtimeMs: number;
}

/** One line of a text file; `terminated` tells whether a newline ended it. */
export interface TextLine {
  text: string;
  terminated: boolean;
}

/** Reads a text file line by line (LF only), dropping a leading byte-order mark. */
export interface TextLineReader {
  readLine(context: Context): Promise<Result<TextLine | undefined, FileError>>;
  close(context: Context): Promise<void>;
}

/** Result of `BinaryReader.scanLines`: byte positions of a line range and the decoded sizes. */
export interface LineScan {
  newlines: number;
  start: number;
  end: number;
  firstLineEnd: number;
  lastLineStart: number;
  selectedBytes: number;
  firstLineBytes: number;
}

/** Positional reads of one opened regular file; it keeps reading that file after a rename. */
export interface BinaryReader {
  info(context: Context): Promise<Result<FileInfo, FileError>>;
  read(offset: number, length: number, context: Context): Promise<Result<Uint8Array, FileError>>;
  scanLines(options: { startLine: number; endLine?: number }, context: Context): Promise<Result<LineScan, FileError>>;
  close(context: Context): Promise<void>;
}

/** Pages through a directory in file-system order. */
export interface DirReader {
  next(maxEntries: number, context: Context): Promise<Result<{ entries: FileInfo[]; done: boolean }, FileError>>;
  close(context: Context): Promise<void>;
}

/** A path to watch, which may not exist yet. */
export interface WatchTarget {
  path: string;
  recursive?: boolean;
  exclude?: { hidden?: boolean; names?: readonly string[] };
}

/** What a watcher reports: changed paths, an overflow (rescan everything), or its final error. */
export type WatchChange = { paths: string[] } | { overflow: true } | { error: FileError };

/** A running watch. */
export interface FileWatcher {
  readonly mode: "native" | "polling";
  close(context: Context): Promise<void>;
}

/** The file half of `ExecutionEnv`. */
export interface FileSystem {
  readonly id: string;
  cwd: string;
  absolutePath(path: string, context: Context): Promise<Result<string, FileError>>;
  joinPath(parts: string[], context: Context): Promise<Result<string, FileError>>;
  readTextFile(path: string, context: Context): Promise<Result<string, FileError>>;
  openTextLineReader(path: string, context: Context): Promise<Result<TextLineReader, FileError>>;
  readTextLines(
    path: string,
    options: { maxLines?: number } | undefined,
    context: Context,
  ): Promise<Result<string[], FileError>>;
  readBinaryFile(path: string, context: Context): Promise<Result<Uint8Array, FileError>>;
  openBinaryReader(
    path: string,
    options: { noFollow?: boolean } | undefined,
    context: Context,
  ): Promise<Result<BinaryReader, FileError>>;
  writeFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>>;
  appendFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>>;
  truncateFile(path: string, size: number, context: Context): Promise<Result<void, FileError>>;
  flushFile(path: string, context: Context): Promise<Result<void, FileError>>;
  renameFile(sourcePath: string, destinationPath: string, context: Context): Promise<Result<void, FileError>>;
  fileInfo(path: string, context: Context): Promise<Result<FileInfo, FileError>>;
  listDir(path: string, context: Context): Promise<Result<FileInfo[], FileError>>;
  openDirReader(path: string, context: Context): Promise<Result<DirReader, FileError>>;
  watch(
    targets: readonly WatchTarget[],
    onChange: (change: WatchChange) => void,
    context: Context,
  ): Promise<Result<FileWatcher, FileError>>;
  canonicalPath(path: string, context: Context): Promise<Result<string, FileError>>;
  exists(path: string, context: Context): Promise<Result<boolean, FileError>>;
  createDir(
    path: string,
    options: { recursive?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>>;
  remove(
    path: string,
    options: { recursive?: boolean; force?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>>;
  createTempDir(prefix: string | undefined, context: Context): Promise<Result<string, FileError>>;
  createTempFile(
    options: { prefix?: string; suffix?: string } | undefined,
    context: Context,
  ): Promise<Result<string, FileError>>;
  cleanup(context: Context): Promise<void>;
}

/** Spill the complete raw output to a temp file once it crosses either threshold. */
export interface ShellSpillOptions {
  afterBytes: number;
  afterLines: number;
}

/** The tail of output a caller keeps; output outside it may be omitted and reported as `skipped`. */
export interface ShellOutputWindow {
  maxBytes: number;
  maxLines: number;
  minIntervalMs: number;
  bytesPerSecond: number;
}

/** Output omitted right before a chunk, measured on the decoded text (U+FFFD counts 3 bytes). */
export interface ShellOutputSkip {
  bytes: number;
  newlines: number;
  endsWithNewline: boolean;
}

/** Which stream a chunk came from, and what was omitted before it (only with a `window`). */
export interface ShellOutputInfo {
  stream: "stdout" | "stderr";
  skipped?: ShellOutputSkip;
}

/**
 * Options of `exec`. `timeout` is in seconds. `C` is the caller's context type: `onOutput` receives the very context
 * passed to `exec`, so a handler typed against chord's `Context` type-checks.
 */
export interface ShellExecOptions<C extends Context = Context> {
  cwd?: string;
  env?: Record<string, string>;
  inheritEnv?: boolean;
  timeout?: number;
  onOutput?: (text: string, context: C, info: ShellOutputInfo) => void;
  spill?: ShellSpillOptions;
  window?: ShellOutputWindow;
}

/** A finished command: its exit code (128 + n for a signal death) and the spill file, if output spilled. */
export interface ShellExecResult {
  exitCode: number;
  spillPath?: string;
}

/** The command half of `ExecutionEnv`. */
export interface Shell {
  exec<C extends Context>(
    command: string | readonly string[],
    options: ShellExecOptions<C> | undefined,
    context: C,
  ): Promise<Result<ShellExecResult, ExecutionError>>;
  cleanup(context: Context): Promise<void>;
}

/** Files and commands on one machine. */
export interface ExecutionEnv extends FileSystem, Shell {}
