/**
 * `RemoteExecutionEnv`: Durable's `ExecutionEnv` over an Outpost agent reached through a `Connection`. Results equal
 * `NodeExecutionEnv`'s on the agent's machine: this side resolves paths with the agent's rules, takes the abort
 * checkpoints where Node takes them, maps errors like Node's `toFileError`, and runs Node's read/write algorithms
 * over the agent's handles; the agent makes the system calls.
 */
import { randomUUID } from "node:crypto";
import { type ExecutionError, FileError } from "../contract/errors.js";
import { abortedError, isAborted, nulByteError, toFileError } from "../contract/file-errors.js";
import { type HostErrorClasses, HostErrors } from "../contract/host-errors.js";
import { basenameOnAgent, dirnameOnAgent, hasNulByte, joinOnAgent, resolveEnvPath } from "../contract/paths.js";
import { err, ok, type Result } from "../contract/result.js";
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
} from "../contract/types.js";
import type { Connection, RemoteInfo } from "../wire/connection.js";
import { fileInfo, infoOfReply, isRepresentable, stringField } from "../wire/wire.js";
import { CommandRunner } from "./exec.js";
import { READ_FILE_FEATURE, readFileBytes, readFileText, writeContent } from "./file-io.js";
import { RemoteHandle } from "./handle.js";
import {
  LIST_FILES_FEATURE,
  type ListFilesOptions,
  type ListFilesResult,
  listFilesOnAgent,
  notSupported,
  validateListFilesOptions,
} from "./list-files.js";
import { listDirectory } from "./listing.js";
import { RemoteBinaryReader, RemoteDirReader, RemoteTextLineReader } from "./readers.js";
import {
  SEARCH_FILES_FEATURE,
  type SearchFilesOptions,
  type SearchFilesResult,
  searchFilesOnAgent,
  searchNotSupported,
  validateSearchFilesOptions,
} from "./search-files.js";
import { RemoteWatcher, type RemoteWatchOptions } from "./watch.js";

/** The agent's `hello.features` name of `mkdtemp`'s `file` (spec/protocol.md section 12). */
export const MKDTEMP_FILE_FEATURE = "mkdtemp.file";

/** Options of {@link RemoteExecutionEnv}. */
export interface RemoteExecutionEnvOptions {
  /** The agent connection; it starts the agent on first use and again after a loss. */
  connection: Connection;
  /** The file namespace: envs with equal ids see the same files (one id per host). */
  id: string;
  /** Working directory for relative paths and commands, kept exactly as given (relative to the agent's cwd). */
  cwd: string;
  /** A custom shell for string commands, as in `NodeExecutionEnv`. */
  shellPath?: string;
  /** Variables layered over the agent's environment for every command that inherits it. */
  shellEnv?: Record<string, string | undefined>;
  /** Options of every watch, as `NodeExecutionEnv`'s `watch` option. */
  watch?: RemoteWatchOptions;
  /**
   * The host's error classes (e.g. Durable's `FileError` and `ExecutionError`): every failure the env, its readers
   * and its watchers return is constructed with them, so the host's `instanceof` checks hold. Default: Outpost's.
   */
  errors?: HostErrorClasses;
}

/** A resolved path and the agent facts it was resolved with. */
interface Located {
  resolved: string;
  info: RemoteInfo;
}

function contentBytes(content: string | Uint8Array): Uint8Array {
  // Lone surrogates become EF BF BD, as with Node's writeFile of a string.
  return typeof content === "string" ? Buffer.from(content, "utf8") : content;
}

/** Durable's `ExecutionEnv` on the machine an Outpost agent runs on. */
export class RemoteExecutionEnv implements ExecutionEnv {
  /** The file namespace: equal ids see the same files. */
  readonly id: string;
  /** Working directory at call time of every method; never normalized. */
  cwd: string;
  readonly #connection: Connection;
  readonly #runner: CommandRunner;
  readonly #shellPath: string | undefined;
  readonly #shellEnv: Record<string, string | undefined> | undefined;
  readonly #watchOptions: RemoteWatchOptions;
  readonly #errors: HostErrors;

  /** Creates the env; nothing is sent to the agent until the first call. */
  constructor(options: RemoteExecutionEnvOptions) {
    this.id = options.id;
    this.cwd = options.cwd;
    this.#connection = options.connection;
    this.#runner = new CommandRunner(options.connection);
    this.#shellPath = options.shellPath;
    this.#shellEnv = options.shellEnv;
    this.#watchOptions = { ...options.watch };
    this.#errors = new HostErrors(options.errors);
  }

  async absolutePath(path: string, _context: Context): Promise<Result<string, FileError>> {
    const located = await this.#locate(path, this.cwd, undefined);
    return located.ok ? ok(located.value.resolved) : located;
  }

  async joinPath(parts: string[], _context: Context): Promise<Result<string, FileError>> {
    try {
      return ok(joinOnAgent(await this.#connection.info(), parts));
    } catch (error) {
      return this.#fail(toFileError(error));
    }
  }

  readTextFile(path: string, context: Context): Promise<Result<string, FileError>> {
    return this.#run(path, context, ({ resolved, info }, signal) =>
      readFileText(this.#connection, resolved, signal, info.features.includes(READ_FILE_FEATURE)),
    );
  }

  readBinaryFile(path: string, context: Context): Promise<Result<Uint8Array, FileError>> {
    return this.#run(path, context, ({ resolved, info }, signal) =>
      readFileBytes(this.#connection, resolved, signal, info.features.includes(READ_FILE_FEATURE)),
    );
  }

  openTextLineReader(path: string, context: Context): Promise<Result<TextLineReader, FileError>> {
    return this.#run(path, context, async ({ resolved }, signal) => {
      const reply = await this.#connection.request("open", { path: resolved, noFollow: false, mode: "read" });
      const handle = RemoteHandle.fromReply(this.#connection, reply);
      // Node's line reader never stats the file, so a `statError` here is not a failure.
      await this.#closeIfAborted(handle, signal, resolved);
      return this.#errors.textLineReader(new RemoteTextLineReader(handle, resolved));
    });
  }

  async readTextLines(
    path: string,
    options: { maxLines?: number } | undefined,
    context: Context,
  ): Promise<Result<string[], FileError>> {
    const maxLines = options?.maxLines;
    // Node returns at once here: no abort check, no open (a missing file gives []).
    if (maxLines !== undefined && maxLines <= 0) return ok([]);
    const opened = await this.openTextLineReader(path, context);
    if (!opened.ok) return opened;
    const reader = opened.value;
    try {
      const lines: string[] = [];
      while (maxLines === undefined || lines.length < maxLines) {
        const line = await reader.readLine(context);
        if (!line.ok) return line;
        if (line.value === undefined) break;
        lines.push(line.value.text);
      }
      return ok(lines);
    } finally {
      await reader.close(context);
    }
  }

  openBinaryReader(
    path: string,
    options: { noFollow?: boolean } | undefined,
    context: Context,
  ): Promise<Result<BinaryReader, FileError>> {
    return this.#run(path, context, async ({ resolved, info }, signal) => {
      const noFollow = options?.noFollow === true;
      const reply = await this.#connection.request("open", { path: resolved, noFollow });
      const handle = RemoteHandle.fromReply(this.#connection, reply);
      await this.#closeIfAborted(handle, signal, resolved);
      return this.#errors.binaryReader(new RemoteBinaryReader(handle, resolved, info));
    });
  }

  writeFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>> {
    return this.#write(path, content, context, false);
  }

  appendFile(path: string, content: string | Uint8Array, context: Context): Promise<Result<void, FileError>> {
    return this.#write(path, content, context, true);
  }

  async truncateFile(path: string, size: number, context: Context): Promise<Result<void, FileError>> {
    const signal = context.abortSignal;
    const located = await this.#locate(path, this.cwd, signal);
    if (!located.ok) return located;
    const { resolved } = located.value;
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    // Validated after the abort check and before the path, like Node (-0 passes: it is >= 0).
    if (!Number.isSafeInteger(size) || size < 0) {
      return this.#fail(new FileError("invalid", "File size must be a non-negative safe integer", resolved));
    }
    if (hasNulByte(resolved)) return this.#fail(nulByteError("path", resolved, resolved));
    try {
      await this.#connection.request("truncate", { path: resolved, size });
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
    // The file is already truncated; an abort meanwhile still reports aborted.
    return isAborted(signal) ? this.#fail(abortedError(resolved)) : ok(undefined);
  }

  flushFile(path: string, context: Context): Promise<Result<void, FileError>> {
    return this.#run(path, context, async ({ resolved }, signal) => {
      await this.#connection.request("fsync", { path: resolved });
      if (isAborted(signal)) throw abortedError(resolved);
    });
  }

  async renameFile(sourcePath: string, destinationPath: string, context: Context): Promise<Result<void, FileError>> {
    const signal = context.abortSignal;
    const cwd = this.cwd;
    const source = await this.#locate(sourcePath, cwd, signal);
    if (!source.ok) return source;
    const destination = await this.#locate(destinationPath, cwd, signal);
    if (!destination.ok) return destination;
    const from = source.value.resolved;
    const to = destination.value.resolved;
    // The only method whose aborted error names the destination; its failures name the source.
    if (isAborted(signal)) return this.#fail(abortedError(to));
    if (hasNulByte(from)) return this.#fail(nulByteError("oldPath", from, from));
    if (hasNulByte(to)) return this.#fail(nulByteError("newPath", to, from));
    try {
      await this.#connection.request("rename", { path: from, to });
      return ok(undefined);
    } catch (error) {
      return this.#fail(toFileError(error, from));
    }
  }

  fileInfo(path: string, context: Context): Promise<Result<FileInfo, FileError>> {
    return this.#run(path, context, async ({ resolved, info }) => {
      const stat = infoOfReply((await this.#connection.request("lstat", { path: resolved })).json);
      if (!isRepresentable(stat)) throw new FileError("invalid", "Unsupported file type", resolved);
      return fileInfo(stat, basenameOnAgent(info, resolved), resolved);
    });
  }

  listDir(path: string, context: Context): Promise<Result<FileInfo[], FileError>> {
    return this.#run(path, context, ({ resolved, info }, signal) =>
      listDirectory(this.#connection, info, resolved, signal),
    );
  }

  /**
   * Every file below `path` that the ignore rules keep (spec/semantics.md §19): paths relative to `path`, in byte
   * order, walked by the agent. Not part of Durable's `ExecutionEnv`.
   */
  async listFiles(
    path: string,
    options: ListFilesOptions | undefined,
    context: Context,
  ): Promise<Result<ListFilesResult, FileError>> {
    const signal = context.abortSignal;
    const located = await this.#locate(path, this.cwd, signal);
    if (!located.ok) return located;
    const { resolved, info } = located.value;
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    const wire = validateListFilesOptions(options, resolved);
    if (!wire.ok) return this.#fail(wire.error);
    if (!info.features.includes(LIST_FILES_FEATURE)) return this.#fail(notSupported(resolved));
    if (hasNulByte(resolved)) return this.#fail(nulByteError("path", resolved, resolved));
    try {
      return ok(await listFilesOnAgent(this.#connection, resolved, wire.value, options?.onPage, signal));
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
  }

  /**
   * The lines matching `pattern` in the files below `path` (or in the file `path`), found by the agent with
   * ripgrep's rules (spec/semantics.md §23), in path then line order. Not part of Durable's `ExecutionEnv`.
   */
  async searchFiles(
    path: string,
    pattern: string,
    options: SearchFilesOptions | undefined,
    context: Context,
  ): Promise<Result<SearchFilesResult, FileError>> {
    const signal = context.abortSignal;
    const located = await this.#locate(path, this.cwd, signal);
    if (!located.ok) return located;
    const { resolved, info } = located.value;
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    const wire = validateSearchFilesOptions(pattern, options, resolved);
    if (!wire.ok) return this.#fail(wire.error);
    if (!info.features.includes(SEARCH_FILES_FEATURE)) return this.#fail(searchNotSupported(resolved));
    if (hasNulByte(resolved)) return this.#fail(nulByteError("path", resolved, resolved));
    try {
      return ok(await searchFilesOnAgent(this.#connection, resolved, wire.value, options?.onPage, signal));
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
  }

  openDirReader(path: string, context: Context): Promise<Result<DirReader, FileError>> {
    return this.#run(path, context, async ({ resolved, info }, signal) => {
      const handle = RemoteHandle.fromReply(
        this.#connection,
        await this.#connection.request("opendir", { path: resolved }),
      );
      await this.#closeIfAborted(handle, signal, resolved);
      return this.#errors.dirReader(new RemoteDirReader(handle, resolved, info));
    });
  }

  /**
   * Node's checkpoints: before opening, and once the watcher is established (then it is closed again); both report
   * `aborted` without a path. Each target is resolved like any path. The watcher outlives `context`, is not
   * tracked by the env (`cleanup()` leaves it running) and survives a lost agent (see `RemoteWatcher`).
   */
  async watch(
    targets: readonly WatchTarget[],
    onChange: (change: WatchChange) => void,
    context: Context,
  ): Promise<Result<FileWatcher, FileError>> {
    const signal = context.abortSignal;
    if (isAborted(signal)) return this.#fail(abortedError(undefined));
    let watcher: RemoteWatcher;
    try {
      const info = await this.#connection.info();
      const cwd = this.cwd;
      const resolved = targets.map((target) => resolveEnvPath(info, cwd, target.path));
      const relay = this.#errors.onChange(onChange);
      watcher = await RemoteWatcher.open(this.#connection, targets, resolved, relay, this.#watchOptions);
    } catch (error) {
      // Node has no checkpoint between its two: an open that fails reports its failure, aborted or not (WA1).
      return this.#fail(toFileError(error));
    }
    if (isAborted(signal)) {
      await watcher.close();
      return this.#fail(abortedError(undefined));
    }
    return ok(watcher);
  }

  canonicalPath(path: string, context: Context): Promise<Result<string, FileError>> {
    return this.#run(path, context, async ({ resolved }) =>
      stringField((await this.#connection.request("realpath", { path: resolved })).json, "path"),
    );
  }

  async exists(path: string, context: Context): Promise<Result<boolean, FileError>> {
    const info = await this.fileInfo(path, context);
    if (info.ok) return ok(true);
    return info.error.code === "not_found" ? ok(false) : info;
  }

  createDir(
    path: string,
    options: { recursive?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>> {
    return this.#run(path, context, async ({ resolved }) => {
      await this.#connection.request("mkdir", { path: resolved, recursive: options?.recursive ?? true });
    });
  }

  remove(
    path: string,
    options: { recursive?: boolean; force?: boolean } | undefined,
    context: Context,
  ): Promise<Result<void, FileError>> {
    return this.#run(path, context, async ({ resolved }) => {
      const recursive = options?.recursive ?? false;
      await this.#connection.request("rm", { path: resolved, recursive, force: options?.force ?? false });
    });
  }

  async createTempDir(prefix: string | undefined, context: Context): Promise<Result<string, FileError>> {
    if (isAborted(context.abortSignal)) return this.#fail(abortedError(undefined));
    try {
      const info = await this.#connection.info();
      // Only a missing prefix defaults; "" stays "", giving a sibling of the temp directory, as in Node.
      const template = joinOnAgent(info, [info.tmpdir, prefix ?? "tmp-"]);
      if (hasNulByte(template)) return this.#fail(nulByteError("prefix", template, undefined));
      return ok(stringField((await this.#connection.request("mkdtemp", { path: template })).json, "path"));
    } catch (error) {
      // Node's error names the template with its random characters filled in; the agent's does the same.
      return this.#fail(toFileError(error));
    }
  }

  async createTempFile(
    options: { prefix?: string; suffix?: string } | undefined,
    context: Context,
  ): Promise<Result<string, FileError>> {
    const name = (options?.prefix ?? "") + randomUUID() + (options?.suffix ?? "");
    const fused = await this.#createTempFileAtOnce(name, context);
    if (fused !== undefined) return fused;
    const directory = await this.createTempDir("tmp-", context);
    if (!directory.ok) return directory;
    let filePath: string | undefined;
    try {
      const info = await this.#connection.info();
      filePath = joinOnAgent(info, [directory.value, name]);
      if (hasNulByte(filePath)) return this.#fail(nulByteError("path", filePath, filePath));
      await writeContent(this.#connection, filePath, new Uint8Array(0), { append: false, parents: false });
      return ok(filePath);
    } catch (error) {
      return this.#fail(toFileError(error, filePath));
    }
  }

  /**
   * `createTempFile` in one request when the agent announced {@link MKDTEMP_FILE_FEATURE} and `name` is one plain
   * path component (then the agent's `<dir>/<name>` is exactly this side's join, and Node's `join` has nothing to
   * normalise): the same abort check and `mkdtemp` as `createTempDir`, then the empty file, with no checkpoint in
   * between, as in Node. `undefined` when the two-request path must be taken.
   */
  async #createTempFileAtOnce(name: string, context: Context): Promise<Result<string, FileError> | undefined> {
    let info: RemoteInfo;
    try {
      info = await this.#connection.info();
    } catch {
      return undefined;
    }
    const plain = name !== "." && name !== ".." && !hasNulByte(name) && basenameOnAgent(info, name) === name;
    if (!info.features.includes(MKDTEMP_FILE_FEATURE) || !plain || /[\\/]/.test(name)) return undefined;
    if (isAborted(context.abortSignal)) return this.#fail(abortedError(undefined));
    const template = joinOnAgent(info, [info.tmpdir, "tmp-"]);
    try {
      const reply = await this.#connection.request("mkdtemp", { path: template, file: name });
      return ok(stringField(reply.json, "file"));
    } catch (error) {
      // The directory's failure names its template; the file's names the file (the agent's error carries both).
      return this.#fail(toFileError(error));
    }
  }

  exec<C extends Context>(
    command: string | readonly string[],
    options: ShellExecOptions<C> | undefined,
    context: C,
  ): Promise<Result<ShellExecResult, ExecutionError>> {
    const running = this.#runner.exec(command, options, context, {
      cwd: this.cwd,
      resolve: (path) => this.#resolvePath(path),
      shellPath: this.#shellPath,
      shellEnv: this.#shellEnv,
      hostEnv: this.commandHostEnv(),
    });
    return running.then((result) => this.#errors.executionResult(result));
  }

  /**
   * The environment commands inherit when the client knows it at call time (a local agent); `undefined` lets the
   * agent use its own environment, as a remote machine's commands do.
   */
  protected commandHostEnv(): Record<string, string | undefined> | undefined {
    return undefined;
  }

  /** Kills every command this env still runs (they settle with exit code 137); never fails. */
  async cleanup(_context: Context): Promise<void> {
    await this.#runner.cleanup();
  }

  /** A failed result with `error` rebuilt with the host's class (the one place env failures leave through). */
  #fail(error: FileError): Result<never, FileError> {
    return err(this.#errors.file(error));
  }

  /** The env's path resolution for `exec`'s `options.cwd`; throws when the agent cannot be reached. */
  async #resolvePath(path: string): Promise<string> {
    const cwd = this.cwd;
    return resolveEnvPath(await this.#connection.info(), cwd, path);
  }

  /**
   * Resolves `path` against `cwd` with the agent's rules. When the agent cannot be reached the failure is
   * `unknown` (the start's message), or `aborted` if the caller gave up anyway.
   */
  async #locate(path: string, cwd: string, signal: AbortSignal | undefined): Promise<Result<Located, FileError>> {
    try {
      const info = await this.#connection.info();
      return ok({ resolved: resolveEnvPath(info, cwd, path), info });
    } catch (error) {
      return this.#fail(isAborted(signal) ? abortedError(path) : toFileError(error, path));
    }
  }

  /**
   * The shape of most methods: resolve, abort check, Node's NUL-byte refusal, then `body`; whatever `body` throws
   * becomes a `FileError` with the resolved path as fallback.
   */
  async #run<T>(
    path: string,
    context: Context,
    body: (located: Located, signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<Result<T, FileError>> {
    const signal = context.abortSignal;
    const located = await this.#locate(path, this.cwd, signal);
    if (!located.ok) return located;
    const { resolved } = located.value;
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    if (hasNulByte(resolved)) return this.#fail(nulByteError("path", resolved, resolved));
    try {
      return ok(await body(located.value, signal));
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
  }

  /** Node's checkpoint right after an open: if aborted, the handle is closed and the open reports aborted. */
  async #closeIfAborted(handle: RemoteHandle, signal: AbortSignal | undefined, path: string): Promise<void> {
    if (!isAborted(signal)) return;
    await handle.close();
    throw abortedError(path);
  }

  /**
   * `writeFile`/`appendFile`: abort check, parents + open + first 512 KiB in one `write`, the rest as chunks
   * (writeFile checks abort before each), and for appendFile a last check after the data is appended.
   */
  async #write(
    path: string,
    content: string | Uint8Array,
    context: Context,
    append: boolean,
  ): Promise<Result<void, FileError>> {
    const signal = context.abortSignal;
    const located = await this.#locate(path, this.cwd, signal);
    if (!located.ok) return located;
    const { resolved, info } = located.value;
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    if (hasNulByte(resolved)) return this.#refuseNulAfterParents(resolved, info, signal);
    try {
      await writeContent(this.#connection, resolved, contentBytes(content), {
        append,
        parents: true,
        signal: append ? undefined : signal,
        cancel: signal,
      });
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
    return append && isAborted(signal) ? this.#fail(abortedError(resolved)) : ok(undefined);
  }

  /**
   * A write to a path with a NUL byte: Node creates the parent directories first (unless the NUL is in them) and
   * only then refuses the path, so the directories exist afterwards here too.
   */
  async #refuseNulAfterParents(
    resolved: string,
    info: RemoteInfo,
    signal: AbortSignal | undefined,
  ): Promise<Result<void, FileError>> {
    const parent = dirnameOnAgent(info, resolved);
    if (hasNulByte(parent)) return this.#fail(nulByteError("path", parent, resolved));
    try {
      await this.#connection.request("mkdir", { path: parent, recursive: true });
    } catch (error) {
      return this.#fail(toFileError(error, resolved));
    }
    if (isAborted(signal)) return this.#fail(abortedError(resolved));
    return this.#fail(nulByteError("path", resolved, resolved));
  }
}
