/**
 * An in-memory stand-in for the agent behind `RemoteExecutionEnv`, for tests of the SDK's own logic (chunking,
 * pipelining, paging, sorting, abort points, sessions). It records every request, tracks how many are in flight,
 * and lets a test hook any operation (to abort, fail or reorder) before it is served.
 */
import type { Connection, RemoteInfo } from "../src/wire/connection.js";
import { RemoteError } from "../src/wire/connection.js";

/** One request the fake received. */
export interface FakeCall {
  op: string;
  json: Record<string, unknown>;
  payload: Uint8Array;
  session: number | undefined;
  signal: AbortSignal | undefined;
}

/** A directory entry as the agent sends it. */
export type FakeEntry = {
  name: string;
  raw?: number[];
  info?: Record<string, unknown>;
  error?: Record<string, unknown>;
};

interface OpenFile {
  kind: "file";
  path: string;
  /** Position of sequential (offset-less) reads. */
  position: number;
  /** Set once a chunk was dropped: later chunks are refused (the agent's poisoned handle). */
  poisoned?: boolean;
}

interface OpenDir {
  kind: "dir";
  entries: FakeEntry[];
  cursor: number;
}

type Hook = (call: FakeCall, index: number) => void | Promise<void>;

/** An agent `info` object. */
export function wireInfo(kind: string, size: number, mtimeSec = 1_700_000_000, mtimeNsec = 123_456_789) {
  return { name: "x", kind, size, mtimeSec, mtimeNsec, dev: 1, ino: 2 };
}

/** The agent error for `code` (`RemoteError`, as the Connection rejects with). */
export function remoteError(code: string, message: string, path?: string): RemoteError {
  return new RemoteError(path === undefined ? { code, message } : { code, message, path });
}

export class FakeAgent {
  readonly calls: FakeCall[] = [];
  readonly hooks = new Map<string, Hook>();
  /** Regular files by path. */
  readonly files = new Map<string, Uint8Array>();
  /** Non-regular files (FIFOs, devices) by path: their content, served by offset-less reads in `pieceSize` bytes. */
  readonly streams = new Map<string, Uint8Array>();
  /** Directory listings by path, in "disk" order. */
  readonly dirs = new Map<string, FakeEntry[]>();
  /** Largest number of requests of one op in flight at once. */
  readonly maxInFlight = new Map<string, number>();
  /** Errors `open {mode:"read"}` reports as `statError` (the fstat after a successful open failed). */
  readonly statErrors = new Map<string, Record<string, unknown>>();
  /** Sizes `open` reports instead of the real ones (to fake huge files). */
  readonly statSizes = new Map<string, number>();
  pieceSize = 7;
  session = 1;
  remoteInfo: RemoteInfo = {
    protocol: 1,
    version: "test",
    os: "linux",
    arch: "x86_64",
    home: "/home/agent",
    separator: "/",
    tmpdir: "/tmp/agent",
    cwd: "/srv/agent",
    driveCwds: {},
    pid: 4242,
    features: [],
  };
  readonly #handles = new Map<number, OpenFile | OpenDir>();
  readonly #inFlight = new Map<string, number>();
  readonly #counts = new Map<string, number>();
  #nextHandle = 1;

  /** This fake typed as the Connection the env expects. */
  connection(): Connection {
    return this as unknown as Connection;
  }

  /** Requests of one op, in arrival order. */
  callsOf(op: string): FakeCall[] {
    return this.calls.filter((call) => call.op === op);
  }

  /** Handles still open. */
  openHandles(): number {
    return this.#handles.size;
  }

  /** Simulates a restart of the agent: handles of the old session are gone and their requests fail as lost. */
  restart(): void {
    this.session++;
    this.#handles.clear();
  }

  /** The agent's `hello` answer, as `Connection.info()`. */
  async info(): Promise<RemoteInfo> {
    return this.remoteInfo;
  }

  async request(
    op: string,
    json: Record<string, unknown>,
    options: { payload?: Uint8Array; session?: number; signal?: AbortSignal } = {},
  ): Promise<{ json: Record<string, unknown>; payload: Uint8Array; session: number }> {
    if (options.session !== undefined && options.session !== this.session) {
      throw new RemoteError({ code: "unknown", message: "outpost agent connection lost", lost: true });
    }
    const call: FakeCall = {
      op,
      json,
      payload: options.payload ?? new Uint8Array(0),
      session: options.session,
      signal: options.signal,
    };
    this.calls.push(call);
    const index = this.#counts.get(op) ?? 0;
    this.#counts.set(op, index + 1);
    const inFlight = (this.#inFlight.get(op) ?? 0) + 1;
    this.#inFlight.set(op, inFlight);
    this.maxInFlight.set(op, Math.max(this.maxInFlight.get(op) ?? 0, inFlight));
    try {
      // Let every request the SDK has in flight arrive before any is answered, as over a real pipe.
      await new Promise((resolve) => setImmediate(resolve));
      await this.hooks.get(op)?.(call, index);
      const reply = this.#serve(call);
      return { json: reply.json ?? {}, payload: reply.payload ?? new Uint8Array(0), session: this.session };
    } finally {
      this.#inFlight.set(op, (this.#inFlight.get(op) ?? 1) - 1);
    }
  }

  #serve(call: FakeCall): { json?: Record<string, unknown>; payload?: Uint8Array } {
    const { json } = call;
    switch (call.op) {
      case "open":
        return this.#open(String(json.path), json.mode === "read");
      case "readFile":
        return this.#readFile(String(json.path), json.max as number);
      case "pread":
        return { payload: this.#pread(this.#file(json), json.offset as number | undefined, json.length as number) };
      case "fstat":
        return { json: wireInfo("file", this.#contentOf(this.#file(json).path).length) };
      case "close":
        this.#handles.delete(json.handle as number);
        return {};
      case "write":
        return this.#write(String(json.path), json.append === true, json.keep === true, call.payload);
      case "writeChunk": {
        const file = this.#file(json);
        // As the agent does: a chunk whose cancel came before its turn is dropped and poisons the handle.
        if (file.poisoned === true) throw remoteError("EBADF", "EBADF: an earlier write failed");
        if (call.signal?.aborted === true) {
          file.poisoned = true;
          throw remoteError("aborted", "aborted");
        }
        this.files.set(file.path, concat(this.files.get(file.path) ?? new Uint8Array(0), call.payload));
        return {};
      }
      case "opendir": {
        const entries = this.dirs.get(String(json.path));
        if (entries === undefined) throw remoteError("ENOENT", "ENOENT: no such file or directory", String(json.path));
        return { json: { handle: this.#add({ kind: "dir", entries, cursor: 0 }) } };
      }
      case "readdir":
        return { json: this.#readdir(json) };
      case "lstat": {
        const path = String(json.path);
        if (this.files.has(path)) return { json: wireInfo("file", this.#contentOf(path).length) };
        if (this.streams.has(path)) return { json: wireInfo("other", 0) };
        if (this.dirs.has(path)) return { json: wireInfo("directory", 4096) };
        throw remoteError("ENOENT", `ENOENT: no such file or directory, lstat '${path}'`, path);
      }
      case "scanLines":
        this.#file(json);
        return {
          json: {
            newlines: 1,
            start: 0,
            end: 3,
            firstLineEnd: 3,
            lastLineStart: 0,
            selectedBytes: 3,
            firstLineBytes: 3,
          },
        };
      case "realpath":
        return { json: { path: String(json.path) } };
      case "mkdtemp":
        return { json: { path: `${String(json.path)}AbC123` } };
      default:
        return {};
    }
  }

  #open(path: string, readMode: boolean): { json: Record<string, unknown> } {
    const stream = this.streams.get(path);
    if (stream !== undefined && readMode) {
      return { json: { handle: this.#add({ kind: "file", path, position: 0 }), stat: wireInfo("other", 0) } };
    }
    const content = this.files.get(path);
    if (content === undefined) throw remoteError("ENOENT", `ENOENT: no such file or directory, open '${path}'`, path);
    const info = wireInfo("file", this.statSizes.get(path) ?? content.length);
    const handle = this.#add({ kind: "file", path, position: 0 });
    const statError = this.statErrors.get(path);
    if (readMode && statError !== undefined) return { json: { handle, statError } };
    return { json: readMode ? { handle, stat: info } : { handle, info } };
  }

  /** The agent's `readFile` op, served only when `features` announces it (else unknown, as an upstream daemon). */
  #readFile(path: string, max: number): { json: Record<string, unknown>; payload?: Uint8Array } {
    if (!this.remoteInfo.features.includes("readFile")) throw remoteError("EINVAL", "unknown operation readFile");
    const content = this.files.get(path);
    const size = this.statSizes.get(path) ?? content?.length ?? 0;
    if (content === undefined || this.statErrors.has(path) || size === 0 || size > max) return this.#open(path, true);
    return { json: { stat: wireInfo("file", size) }, payload: content.slice(0, size) };
  }

  #pread(file: OpenFile, offset: number | undefined, length: number): Uint8Array {
    const content = this.#contentOf(file.path);
    if (offset !== undefined) return content.slice(offset, offset + length);
    const piece = content.slice(file.position, file.position + Math.min(length, this.pieceSize));
    file.position += piece.length;
    return piece;
  }

  #write(path: string, append: boolean, keep: boolean, payload: Uint8Array): { json: Record<string, unknown> } {
    const before = append ? (this.files.get(path) ?? new Uint8Array(0)) : new Uint8Array(0);
    this.files.set(path, concat(before, payload));
    return { json: keep ? { handle: this.#add({ kind: "file", path, position: 0 }) } : {} };
  }

  #readdir(json: Record<string, unknown>): Record<string, unknown> {
    const dir = this.#handles.get(json.handle as number);
    if (dir?.kind !== "dir") throw remoteError("EBADF", "EBADF: bad file descriptor");
    const page = dir.entries.slice(dir.cursor, dir.cursor + (json.max as number));
    dir.cursor += page.length;
    return { entries: page, done: dir.cursor >= dir.entries.length };
  }

  #contentOf(path: string): Uint8Array {
    return this.files.get(path) ?? this.streams.get(path) ?? new Uint8Array(0);
  }

  #file(json: Record<string, unknown>): OpenFile {
    const file = this.#handles.get(json.handle as number);
    if (file?.kind !== "file") throw remoteError("EBADF", "EBADF: bad file descriptor");
    return file;
  }

  #add(handle: OpenFile | OpenDir): number {
    const id = this.#nextHandle++;
    this.#handles.set(id, handle);
    return id;
  }
}

function concat(left: Uint8Array, right: Uint8Array): Uint8Array {
  const out = new Uint8Array(left.length + right.length);
  out.set(left, 0);
  out.set(right, left.length);
  return out;
}
