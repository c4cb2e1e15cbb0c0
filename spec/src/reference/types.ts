/**
 * The `ExecutionEnv` contract as the reference declares it, from `durable-env.md` §1.3–§1.8. These are the
 * reference's own declarations (the oracle imports nothing from the SDK); they are structurally the same as
 * Durable's, so the conformance suite, typed against the SDK, accepts a reference env and its results.
 */
import type { ExecutionError, FileError } from "./errors.js";
import type { Result } from "./result.js";

/** What an env reads of chord's `Context`; a richer context is accepted and handed back to `onOutput` as is. */
export interface Context {
  readonly abortSignal: AbortSignal | undefined;
}

/** A failure-or-value promise of a file operation. */
type FileResult<T> = Promise<Result<T, FileError>>;

/** The kinds a `FileInfo` can name; FIFOs, sockets and devices have none. */
export type FileKind = "file" | "directory" | "symlink";

/** `lstat` facts of one path. */
export interface FileInfo {
  name: string;
  path: string;
  kind: FileKind;
  size: number;
  mtimeMs: number;
}

/** A line of text and whether an LF ended it. */
export interface TextLine {
  text: string;
  terminated: boolean;
}

/** Yields a file's lines, split at LF only. */
export interface TextLineReader {
  readLine(context: Context): FileResult<TextLine | undefined>;
  close(context: Context): Promise<void>;
}

/** Where lines `[startLine, endLine)` lie in a file and how long they are decoded (§1.3, §4.3). */
export interface LineScan {
  newlines: number;
  start: number;
  end: number;
  firstLineEnd: number;
  lastLineStart: number;
  selectedBytes: number;
  firstLineBytes: number;
}

/** Positional reads of one opened regular file. */
export interface BinaryReader {
  info(context: Context): FileResult<FileInfo>;
  read(offset: number, length: number, context: Context): FileResult<Uint8Array>;
  scanLines(options: { startLine: number; endLine?: number }, context: Context): FileResult<LineScan>;
  close(context: Context): Promise<void>;
}

/** Pages of one directory's entries. */
export interface DirReader {
  next(maxEntries: number, context: Context): FileResult<{ entries: FileInfo[]; done: boolean }>;
  close(context: Context): Promise<void>;
}

/** One watched path (it may be missing). */
export interface WatchTarget {
  path: string;
  recursive?: boolean;
  exclude?: { hidden?: boolean; names?: readonly string[] };
}

/** A watcher report. */
export type WatchChange = { paths: string[] } | { overflow: true } | { error: FileError };

/** A watch in progress. */
export interface FileWatcher {
  readonly mode: "native" | "polling";
  close(context: Context): Promise<void>;
}

/** Durable's `FileSystem` (§1.4). */
export interface FileSystem {
  readonly id: string;
  cwd: string;
  absolutePath(path: string, context: Context): FileResult<string>;
  joinPath(parts: string[], context: Context): FileResult<string>;
  readTextFile(path: string, context: Context): FileResult<string>;
  readBinaryFile(path: string, context: Context): FileResult<Uint8Array>;
  openTextLineReader(path: string, context: Context): FileResult<TextLineReader>;
  readTextLines(path: string, options: { maxLines?: number } | undefined, context: Context): FileResult<string[]>;
  openBinaryReader(
    path: string,
    options: { noFollow?: boolean } | undefined,
    context: Context,
  ): FileResult<BinaryReader>;
  writeFile(path: string, content: string | Uint8Array, context: Context): FileResult<void>;
  appendFile(path: string, content: string | Uint8Array, context: Context): FileResult<void>;
  truncateFile(path: string, size: number, context: Context): FileResult<void>;
  flushFile(path: string, context: Context): FileResult<void>;
  renameFile(sourcePath: string, destinationPath: string, context: Context): FileResult<void>;
  fileInfo(path: string, context: Context): FileResult<FileInfo>;
  listDir(path: string, context: Context): FileResult<FileInfo[]>;
  openDirReader(path: string, context: Context): FileResult<DirReader>;
  watch(
    targets: readonly WatchTarget[],
    onChange: (change: WatchChange) => void,
    context: Context,
  ): FileResult<FileWatcher>;
  canonicalPath(path: string, context: Context): FileResult<string>;
  exists(path: string, context: Context): FileResult<boolean>;
  createDir(path: string, options: { recursive?: boolean } | undefined, context: Context): FileResult<void>;
  remove(
    path: string,
    options: { recursive?: boolean; force?: boolean } | undefined,
    context: Context,
  ): FileResult<void>;
  createTempDir(prefix: string | undefined, context: Context): FileResult<string>;
  createTempFile(options: { prefix?: string; suffix?: string } | undefined, context: Context): FileResult<string>;
  cleanup(context: Context): Promise<void>;
}

/** Spill thresholds of `exec` (§1.6). */
export interface ShellSpillOptions {
  afterBytes: number;
  afterLines: number;
}

/** The output window of the upstream remote env (§3.10); the reference accepts and ignores it. */
export interface ShellOutputWindow {
  maxBytes: number;
  maxLines: number;
  minIntervalMs: number;
  bytesPerSecond: number;
}

/** Output left out before a chunk (only with a window). */
export interface ShellOutputSkip {
  bytes: number;
  newlines: number;
  endsWithNewline: boolean;
}

/** The stream of an output chunk. */
export interface ShellOutputInfo {
  stream: "stdout" | "stderr";
  skipped?: ShellOutputSkip;
}

/** Options of `exec` (§1.6); `onOutput` gets back the context given to `exec`, typed as the caller typed it. */
export interface ShellExecOptions<C extends Context = Context> {
  cwd?: string;
  env?: Record<string, string>;
  inheritEnv?: boolean;
  timeout?: number;
  onOutput?: (text: string, context: C, info: ShellOutputInfo) => void;
  spill?: ShellSpillOptions;
  window?: ShellOutputWindow;
}

/** What a finished command reports. */
export interface ShellExecResult {
  exitCode: number;
  spillPath?: string;
}

/** Durable's `Shell` (§1.5). */
export interface Shell {
  exec<C extends Context>(
    command: string | readonly string[],
    options: ShellExecOptions<C> | undefined,
    context: C,
  ): Promise<Result<ShellExecResult, ExecutionError>>;
  cleanup(context: Context): Promise<void>;
}

/** Durable's `ExecutionEnv`: a file system and a shell of one machine. */
export interface ExecutionEnv extends FileSystem, Shell {}
