/**
 * Our own in-process implementation of Durable's `NodeExecutionEnv`, rule for rule. It is the ORACLE of the
 * conformance and property tests: where an Outpost env and this one disagree, the Outpost env is wrong (unless
 * this one is wrong about Durable — see `spec/semantics.md`, whose rule ids are cited in comments here).
 *
 * Methods call each other through `this`, as Durable's do, so a subclass can override one step (for example
 * `createTempFile`, to make a spill fail).
 */
import { randomUUID } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import {
  appendFile,
  lstat,
  mkdir,
  mkdtemp,
  open,
  opendir,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type ExecutionError, FileError } from "./errors.js";
import { runExec } from "./exec.js";
import { toFileInfo } from "./file-info.js";
import { resolvePath } from "./paths.js";
import { NodeBinaryReader, NodeDirReader, NodeTextLineReader } from "./readers.js";
import { err, ok, type Result } from "./result.js";
import { killProcessTree } from "./shell.js";
import { abortedFileError, toFileError } from "./to-file-error.js";
import type {
  BinaryReader,
  Context,
  DirReader,
  ExecutionEnv,
  FileInfo,
  FileWatcher,
  ShellExecOptions,
  ShellExecResult,
  TextLineReader,
  WatchChange,
  WatchTarget,
} from "./types.js";
import { NodeFileWatcher, type NodeWatchOptions } from "./watcher.js";

export { LineScanner } from "./line-scanner.js";
export { resolvePath } from "./paths.js";
export { toFileError } from "./to-file-error.js";
export { NodeFileWatcher, type NodeWatchOptions } from "./watcher.js";

const onWindows = process.platform === "win32";

/** Options of the reference env (Durable's). */
export interface NodeExecutionEnvOptions {
  cwd: string;
  shellPath?: string;
  shellEnv?: NodeJS.ProcessEnv;
  /** Options of every watcher this env opens (WA2, WA3, WA5). */
  watch?: NodeWatchOptions;
}

function isAborted(context: Context): boolean {
  return context.abortSignal?.aborted === true;
}

async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  if (handle === undefined) return;
  try {
    await handle.close();
  } catch {
    // Best effort, as in Durable.
  }
}

/** Durable's `NodeExecutionEnv`, reimplemented: files and commands of this machine, through Node. */
export class NodeExecutionEnv implements ExecutionEnv {
  /** Every local Node env shares this file namespace. */
  readonly id = "node:local";
  /** Used as given at every call (not normalized); relative paths resolve against it. */
  cwd: string;
  readonly #shellPath: string | undefined;
  readonly #shellEnv: NodeJS.ProcessEnv | undefined;
  readonly #watchOptions: NodeWatchOptions;
  /** Pids of commands whose `exec` has not settled. */
  readonly #activePids = new Set<number>();

  constructor(options: NodeExecutionEnvOptions) {
    this.cwd = options.cwd;
    this.#shellPath = options.shellPath;
    this.#shellEnv = options.shellEnv;
    this.#watchOptions = options.watch ?? {};
  }

  #resolve(path: string): string {
    return resolvePath(this.cwd, path);
  }

  /**
   * The frame of most file methods: resolves `path`, fails `aborted` before anything when the context is already
   * aborted, and turns whatever `body` throws into the FileError Durable's `toFileError` makes (on `resolved`).
   */
  async #onPath<T>(
    path: string,
    context: Context,
    body: (resolved: string) => Promise<Result<T, FileError>>,
  ): Promise<Result<T, FileError>> {
    const resolved = this.#resolve(path);
    if (isAborted(context)) return err(abortedFileError(resolved));
    try {
      return await body(resolved);
    } catch (error) {
      return err(toFileError(error, resolved));
    }
  }

  /** P1–P13: the resolved absolute path; never fails, no abort check. */
  async absolutePath(path: string, _context: Context): Promise<Result<string, FileError>> {
    return ok(this.#resolve(path));
  }

  /** P14: Node's `path.join` of the parts; no cwd, no abort check. */
  async joinPath(parts: string[], _context: Context): Promise<Result<string, FileError>> {
    return ok(join(...parts));
  }

  /** R1: Node's `readFile(path, "utf8")` with the abort signal; the BOM is kept. */
  async readTextFile(path: string, context: Context): Promise<Result<string, FileError>> {
    return this.#onPath(path, context, async (resolved) =>
      ok(await readFile(resolved, { encoding: "utf8", signal: context.abortSignal })),
    );
  }

  /** R2: Node's `readFile(path)` with the abort signal; returns the Buffer. */
  async readBinaryFile(path: string, context: Context): Promise<Result<Uint8Array, FileError>> {
    return this.#onPath(path, context, async (resolved) =>
      ok(await readFile(resolved, { signal: context.abortSignal })),
    );
  }

  /** R7: opens the file like `open(path, "r")`; a directory fails at the first `readLine`. */
  async openTextLineReader(path: string, context: Context): Promise<Result<TextLineReader, FileError>> {
    const resolved = this.#resolve(path);
    if (isAborted(context)) return err(abortedFileError(resolved));
    let handle: FileHandle;
    try {
      handle = await open(resolved, "r");
    } catch (error) {
      return err(toFileError(error, resolved));
    }
    if (isAborted(context)) {
      await closeQuietly(handle);
      return err(abortedFileError(resolved));
    }
    return ok(new NodeTextLineReader(handle, resolved));
  }

  /** R9: up to `maxLines` lines; `maxLines <= 0` returns `[]` before anything else. */
  async readTextLines(
    path: string,
    options: { maxLines?: number } | undefined,
    context: Context,
  ): Promise<Result<string[], FileError>> {
    // §2.5: a defined limit of zero or less answers at once, before any abort or existence check (so does `null`,
    // which compares as 0). A limit compares numerically (1.5 reads two lines, NaN none); no limit reads all lines.
    // The reader is closed whatever happens.
    const maxLines = options?.maxLines;
    if (maxLines !== undefined && maxLines <= 0) return ok([]);
    const limit = maxLines === undefined ? Number.POSITIVE_INFINITY : maxLines;
    const opened = await this.openTextLineReader(path, context);
    if (!opened.ok) return opened;
    const texts: string[] = [];
    try {
      for (let count = 0; count < limit; count++) {
        const next = await opened.value.readLine(context);
        if (!next.ok) return err(next.error);
        if (next.value === undefined) break;
        texts.push(next.value.text);
      }
    } finally {
      await opened.value.close(context);
    }
    return ok(texts);
  }

  /** R10: nonblocking open of a regular file (`O_NOFOLLOW` with `noFollow`). */
  async openBinaryReader(
    path: string,
    options: { noFollow?: boolean } | undefined,
    context: Context,
  ): Promise<Result<BinaryReader, FileError>> {
    const resolved = this.#resolve(path);
    if (isAborted(context)) return err(abortedFileError(resolved));
    const noFollow = options?.noFollow === true;
    let handle: FileHandle | undefined;
    try {
      if (onWindows && noFollow) {
        // Windows has no O_NOFOLLOW: check first (racy, as in Durable).
        if ((await lstat(resolved)).isSymbolicLink()) {
          return err(new FileError("invalid", "Refusing to follow a symbolic link", resolved));
        }
      }
      handle = await open(resolved, readerOpenFlags(noFollow));
      const stats = await handle.stat();
      if (!stats.isFile()) {
        await closeQuietly(handle);
        handle = undefined;
        return err(
          stats.isDirectory()
            ? new FileError("is_directory", "EISDIR: illegal operation on a directory, read", resolved)
            : new FileError("invalid", "Not a regular file", resolved),
        );
      }
      if (isAborted(context)) {
        await closeQuietly(handle);
        return err(abortedFileError(resolved));
      }
      return ok(new NodeBinaryReader(handle, resolved));
    } catch (error) {
      await closeQuietly(handle);
      const code = (error as { code?: unknown }).code;
      if (noFollow && (code === "ELOOP" || code === "EMLINK")) {
        return err(new FileError("invalid", "Refusing to follow a symbolic link", resolved, error as Error));
      }
      return err(toFileError(error, resolved));
    }
  }

  /** W1: creates the parent, then Node's `writeFile` with the signal (512 KiB writes, abort check before each). */
  async writeFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      await mkdir(dirname(resolved), { recursive: true });
      if (isAborted(context)) return err(abortedFileError(resolved));
      await writeFile(resolved, content, { signal: context.abortSignal });
      return ok(undefined);
    });
  }

  /** W3: creates the parent, then Node's `appendFile` WITHOUT a signal; checks abort after appending. */
  async appendFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      await mkdir(dirname(resolved), { recursive: true });
      if (isAborted(context)) return err(abortedFileError(resolved));
      await appendFile(resolved, content);
      if (isAborted(context)) return err(abortedFileError(resolved));
      return ok(undefined);
    });
  }

  /** W4: `open(path, "r+")` + `ftruncate(size)`; never creates; checks abort after truncating. */
  async truncateFile(path: string, size: number, context: Context): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      if (!Number.isSafeInteger(size) || size < 0) {
        return err(new FileError("invalid", "File size must be a non-negative safe integer", resolved));
      }
      return withUpdateHandle(resolved, async (handle) => {
        await handle.truncate(size);
        return isAborted(context) ? err(abortedFileError(resolved)) : ok(undefined);
      });
    });
  }

  /** W5: `open(path, "r+")` + full `fsync`; checks abort after the fsync. */
  async flushFile(path: string, context: Context): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, (resolved) =>
      withUpdateHandle(resolved, async (handle) => {
        if ((await handle.stat()).isDirectory()) return err(new FileError("is_directory", "Is a directory", resolved));
        await handle.sync();
        return isAborted(context) ? err(abortedFileError(resolved)) : ok(undefined);
      }),
    );
  }

  /** W6: `rename(2)`; an abort reports the destination, every other failure the source. */
  async renameFile(sourcePath: string, destinationPath: string, context: Context): Promise<Result<void, FileError>> {
    const source = this.#resolve(sourcePath);
    const destination = this.#resolve(destinationPath);
    if (isAborted(context)) return err(abortedFileError(destination));
    try {
      await rename(source, destination);
      return ok(undefined);
    } catch (error) {
      return err(toFileError(error, source));
    }
  }

  /** M1: `lstat`; kinds other than file/directory/symlink fail `invalid`. */
  async fileInfo(path: string, context: Context): Promise<Result<FileInfo, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      const info = toFileInfo(resolved, await lstat(resolved));
      return info === undefined ? err(new FileError("invalid", "Unsupported file type", resolved)) : ok(info);
    });
  }

  /** M2: `fileInfo`, with `not_found` turned into `false`; every other failure is returned. */
  async exists(path: string, context: Context): Promise<Result<boolean, FileError>> {
    const info = await this.fileInfo(path, context);
    if (info.ok) return ok(true);
    if (info.error.code === "not_found") return ok(false);
    return err(info.error);
  }

  /** D1: the whole directory in Node's `readdir` order; any entry's `lstat` failure fails the call. */
  async listDir(path: string, context: Context): Promise<Result<FileInfo[], FileError>> {
    const resolved = this.#resolve(path);
    if (isAborted(context)) return err(abortedFileError(resolved));
    let names: string[];
    try {
      names = (await readdir(resolved, { withFileTypes: true })).map((entry) => entry.name);
    } catch (error) {
      return err(toFileError(error, resolved));
    }
    const infos: FileInfo[] = [];
    for (const name of names) {
      if (isAborted(context)) return err(abortedFileError(resolved));
      const entryPath = resolve(resolved, name);
      try {
        const info = toFileInfo(entryPath, await lstat(entryPath));
        if (info !== undefined) infos.push(info);
      } catch (error) {
        return err(toFileError(error, entryPath));
      }
    }
    return ok(infos);
  }

  /** D4: `opendir`; pages come in raw directory order. */
  async openDirReader(path: string, context: Context): Promise<Result<DirReader, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      const dir = await opendir(resolved);
      if (isAborted(context)) {
        try {
          await dir.close();
        } catch {
          // Best effort.
        }
        return err(abortedFileError(resolved));
      }
      return ok(new NodeDirReader(dir, resolved));
    });
  }

  /**
   * WA1: checkpoint, open a `NodeFileWatcher` on the targets (resolved against the cwd of this call), checkpoint
   * again (closing the watcher). Failures map through `toFileError` without a fallback path (E5).
   */
  async watch(
    targets: readonly WatchTarget[],
    onChange: (change: WatchChange) => void,
    context: Context,
  ): Promise<Result<FileWatcher, FileError>> {
    if (isAborted(context)) return err(abortedFileError(undefined));
    const cwd = this.cwd;
    let watcher: NodeFileWatcher;
    try {
      watcher = await NodeFileWatcher.open(targets, (path) => resolvePath(cwd, path), onChange, this.#watchOptions);
    } catch (error) {
      return err(toFileError(error));
    }
    if (isAborted(context)) {
      await watcher.close();
      return err(abortedFileError(undefined));
    }
    return ok(watcher);
  }

  /** M3: `realpath`; must exist. */
  async canonicalPath(path: string, context: Context): Promise<Result<string, FileError>> {
    return this.#onPath(path, context, async (resolved) => ok(await realpath(resolved)));
  }

  /** M4: `mkdir`, recursive unless `recursive: false`. */
  async createDir(
    path: string,
    options: { recursive?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      await mkdir(resolved, { recursive: options?.recursive ?? true });
      return ok(undefined);
    });
  }

  /** M5: Node's `rm` (lstat first; never follows a symlink; `recursive` and `force` default to false). */
  async remove(
    path: string,
    options: { recursive?: boolean; force?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>> {
    return this.#onPath(path, context, async (resolved) => {
      await rm(resolved, { recursive: options?.recursive ?? false, force: options?.force ?? false });
      return ok(undefined);
    });
  }

  /** T2: `mkdtemp(join(os.tmpdir(), prefix ?? "tmp-"))`. */
  async createTempDir(prefix: string | undefined, context: Context): Promise<Result<string, FileError>> {
    if (isAborted(context)) return err(abortedFileError(undefined));
    try {
      return ok(await mkdtemp(join(tmpdir(), prefix ?? "tmp-")));
    } catch (error) {
      return err(toFileError(error));
    }
  }

  /** T3: an empty `<prefix><uuid><suffix>` in a fresh `tmp-XXXXXX` directory (made by `this.createTempDir`). */
  async createTempFile(
    options: { prefix?: string; suffix?: string } | undefined,
    context: Context,
  ): Promise<Result<string, FileError>> {
    const dir = await this.createTempDir("tmp-", context);
    if (!dir.ok) return dir;
    const filePath = join(dir.value, `${options?.prefix ?? ""}${randomUUID()}${options?.suffix ?? ""}`);
    try {
      await writeFile(filePath, "");
      return ok(filePath);
    } catch (error) {
      return err(toFileError(error, filePath));
    }
  }

  /** X1–X32: runs a command (string through the shell, array directly). */
  async exec(
    command: string | readonly string[],
    options: ShellExecOptions | undefined,
    context: Context,
  ): Promise<Result<ShellExecResult, ExecutionError>> {
    return runExec(
      {
        cwd: this.cwd,
        shellPath: this.#shellPath,
        shellEnv: this.#shellEnv,
        activePids: this.#activePids,
        createTempFile: (options, context) => this.createTempFile(options, context),
      },
      command,
      options,
      context,
    );
  }

  /** C1: kills the process tree of every command still running; best effort, never waits. */
  async cleanup(_context: Context): Promise<void> {
    for (const pid of this.#activePids) killProcessTree(pid);
    this.#activePids.clear();
  }
}

/** W4/W5: Node's `open(path, "r+")`, then `use` on the handle; the handle is always closed (quietly). */
async function withUpdateHandle(
  resolved: string,
  use: (handle: FileHandle) => Promise<Result<void, FileError>>,
): Promise<Result<void, FileError>> {
  const handle = await open(resolved, "r+");
  try {
    return await use(handle);
  } finally {
    await closeQuietly(handle);
  }
}

/** `O_RDONLY | O_NONBLOCK` (so a FIFO does not block), plus `O_NOFOLLOW` when asked; plain read-only on Windows. */
function readerOpenFlags(noFollow: boolean): number {
  if (onWindows) return fsConstants.O_RDONLY;
  return fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (noFollow ? fsConstants.O_NOFOLLOW : 0);
}
