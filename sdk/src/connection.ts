/**
 * The client end of the agent's protocol: starts the agent lazily from a command, synchronizes on its marker line,
 * multiplexes requests over frames, keeps the link alive with pings, and restarts the agent after a loss.
 */
import { ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import {
  CorruptFrameError,
  encodeFrame,
  type Frame,
  FrameDecoder,
  FrameType,
  type FrameTypeValue,
  TRANSIENT,
} from "./frame.js";
import { TextTail, withStderrTail } from "./stderr-tail.js";
import { isWireObject } from "./wire.js";

/**
 * A started agent as `Connection` drives it: a child process, or anything shaped like one (an agent at the end of
 * an SSH channel). `exit` and `close` carry `(code, signal)`; `close` comes once the stdio have ended.
 */
export interface AgentProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
  ref(): void;
  unref(): void;
  on(event: "exit" | "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: "error", listener: (error: Error) => void): this;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

/** How to start the agent and where its diagnostics go. */
export interface ConnectionOptions {
  /**
   * The agent's argv, or an async function computing it at every start (its failure fails only that start).
   * `serve --token <hex>` is appended. Ignored when `launch` is given.
   */
  command?: readonly string[] | (() => Promise<readonly string[]>);
  /**
   * Starts the agent some other way than spawning `command` (e.g. over SSH), with `args` (`serve --token <hex>`)
   * as its arguments, at every start; its failure fails only that start, as `spawn_error`.
   */
  launch?: (args: readonly string[]) => Promise<AgentProcess>;
  /** Receives the agent's stderr as it arrives and any non-blank output printed before its marker line. */
  onLog?: (text: string) => void;
  /** @internal Ping interval (default 5 s); tests shorten it. */
  pingIntervalMs?: number;
  /** @internal Silence after which the connection counts as lost (default 30 s); tests shorten it. */
  silenceLimitMs?: number;
  /** @internal Time the agent has to print its marker and answer `hello` (default 60 s). */
  startTimeoutMs?: number;
  /**
   * Bounds, in milliseconds, how long each request other than `exec` and `watch` (which last as long as their
   * command or watcher) may wait for its answer. Default: none, as Node's file operations have none — an agent
   * that keeps pinging but never answers would leave the request waiting. A request that runs out of time fails
   * as lost (`{lost: true, timedOut: true}`: its outcome is unknown), a cancel is sent for it, and a late answer is
   * ignored. `RequestOptions.timeoutMs` overrides it per request.
   */
  requestTimeoutMs?: number;
}

/** What the agent reports about its machine in answer to `hello`. */
export interface RemoteInfo {
  protocol: number;
  version: string;
  /** `linux`, `macos`, `android` or `windows`. */
  os: string;
  /** `x86_64` or `aarch64`. */
  arch: string;
  home: string;
  separator: string;
  tmpdir: string;
  cwd: string;
  driveCwds: Record<string, string>;
  pid: number;
  /** Operations beyond protocol 1 that this agent implements. */
  features: string[];
}

/** A successful reply: its JSON, its payload (owning its bytes), and the session that answered. */
export interface Reply {
  json: Record<string, unknown>;
  payload: Uint8Array;
  session: number;
}

/** Per-request options. */
export interface RequestOptions {
  /** Raw bytes sent after the JSON. */
  payload?: Uint8Array;
  /** Aborting sends a cancel frame; the request still settles with whatever the agent answers. */
  signal?: AbortSignal;
  /**
   * Fails the request as lost (`{lost: true, timedOut: true}`) if no answer came within this many milliseconds,
   * sending a cancel; `Infinity` means no limit. Default: the connection's `requestTimeoutMs` (none for `exec` and
   * `watch`).
   */
  timeoutMs?: number;
  /** Binds the request to a session (e.g. a handle's): if it is no longer the live one, the request fails as lost. */
  session?: number;
  /** Receives the request's event frames. */
  onEvent?: (json: Record<string, unknown>, payload: Uint8Array) => void;
  /** Called with the request id and session just before the request is written. */
  onStart?: (id: number, session: number) => void;
  /**
   * Called when the result's payload of `length` bytes has arrived; it may return a `Uint8Array` of exactly that
   * length for the payload to be copied into (the reply's `payload` is then that array), saving a copy of large
   * reads. Not called for events or errors.
   */
  payloadInto?: (length: number) => Uint8Array | undefined;
  /**
   * `onEvent` reads each payload before it returns and keeps no reference to it: payloads may then be views into
   * memory that is reused for the next frame, which saves an allocation and a copy per event of bulk output.
   */
  transientEvents?: boolean;
  /**
   * Once its first event arrives, the request may stay pending for as long as it likes without keeping the host
   * process alive (a watch, like Node's non-persistent `fs.watch`); once cancelled, it keeps it alive again until
   * it ends.
   */
  background?: boolean;
}

/** A failure reported by the agent (an error frame), or a lost or closed connection. */
export class RemoteError extends Error {
  override readonly name = "RemoteError";
  /** The error frame's `code` if a string, else `"unknown"`. */
  code: string;
  /** The error frame's `path` if a string. */
  path?: string;
  /** The error frame's whole JSON. */
  fields: Record<string, unknown>;

  /** Builds the error from an error frame's JSON; `message` overrides the frame's message. */
  constructor(fields: Record<string, unknown>, message?: string) {
    super(message ?? (typeof fields.message === "string" ? fields.message : "Remote operation failed"));
    this.code = typeof fields.code === "string" ? fields.code : "unknown";
    if (typeof fields.path === "string") this.path = fields.path;
    this.fields = fields;
  }
}

/** Tells whether an error means the agent connection was lost (the outcome of the request is then unknown). */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("fields" in error)) return false;
  const fields = (error as { fields: unknown }).fields;
  return typeof fields === "object" && fields !== null && (fields as Record<string, unknown>).lost === true;
}

const PROTOCOL = 1;
/** Operations that last as long as their command or watcher: no default deadline applies to them. */
const LONG_RUNNING_OPS = new Set(["exec", "watch"]);
const PING_INTERVAL_MS = 5_000;
const SILENCE_LIMIT_MS = 30_000;
const START_TIMEOUT_MS = 60_000;
/** How long a not-yet-ready agent that exited may keep its pipes open (via a descendant) before we give up. */
const EXIT_DRAIN_MS = 2_000;
/** Noise before the marker line is kept up to this size while searching. */
const SYNC_SEARCH_LIMIT = 1024 * 1024;
/** How long `close()` waits for the agent to exit after SIGTERM before sending SIGKILL. */
const CLOSE_KILL_MS = 3_000;
const MAX_REQUEST_ID = 0xffff_ffff;

function lostError(message: string, code = "unknown"): RemoteError {
  return new RemoteError({ code, message, lost: true });
}

function closedError(): RemoteError {
  return new RemoteError({ code: "unknown", message: "Connection closed" });
}

function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/** Pieces (headers and payloads) after which a burst of frames is written without waiting for the end of the turn. */
const BATCH_PIECES = 128;

/**
 * Writes frames to the agent's stdin in order, waiting for `drain` whenever the pipe is full. Frames written in one
 * turn of the event loop (a burst of concurrent requests, a header and its payload) leave together in one `writev`
 * at the end of the turn, so a thousand requests cost one system call and one wake-up of the agent, not a thousand.
 */
class FrameWriter {
  readonly #stream: Writable;
  #queue: Uint8Array[] = [];
  #blocked = false;
  /** Pieces written in this turn, not yet handed to the stream. */
  #batch: Uint8Array[] = [];
  #scheduled = false;
  readonly #flushBatch = () => {
    this.#scheduled = false;
    this.#writeBatch();
  };

  constructor(stream: Writable) {
    this.#stream = stream;
    stream.on("drain", () => this.#flush());
    // EPIPE and friends: the agent is gone; its exit tears the session down.
    stream.on("error", () => {});
  }

  write(pieces: readonly Uint8Array[]): void {
    for (const piece of pieces) this.#batch.push(piece);
    if (this.#batch.length >= BATCH_PIECES) {
      // A long burst goes out in slices, so the agent starts on the first requests while later ones are built.
      this.#writeBatch();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      process.nextTick(this.#flushBatch);
    }
  }

  #writeBatch(): void {
    if (this.#batch.length === 0) return;
    const pieces = this.#batch;
    this.#batch = [];
    const cork = pieces.length > 1 && !this.#blocked && !this.#stream.writableEnded && !this.#stream.destroyed;
    if (cork) this.#stream.cork();
    for (const piece of pieces) {
      if (this.#blocked) this.#queue.push(piece);
      else this.#writeNow(piece);
    }
    if (cork) this.#stream.uncork();
  }

  end(): void {
    // Frames written just before the end (a last cancel) still go out first.
    this.#writeBatch();
    this.#queue = [];
    if (this.#stream.writableEnded || this.#stream.destroyed) return;
    try {
      this.#stream.end();
    } catch {
      // The pipe is already broken; nothing to end.
    }
  }

  #writeNow(piece: Uint8Array): void {
    if (this.#stream.writableEnded || this.#stream.destroyed) return;
    try {
      if (!this.#stream.write(piece)) this.#blocked = true;
    } catch {
      // Synchronous write failures mean the pipe is gone; the exit handler reports the loss.
    }
  }

  #flush(): void {
    this.#blocked = false;
    while (this.#queue.length > 0 && !this.#blocked) this.#writeNow(this.#queue.shift()!);
  }
}

/** A request waiting for its result. Settling it forgets it, detaches its abort listener and updates the ref. */
class Pending {
  readonly #session: Session;
  readonly #id: number;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: (reply: Reply) => void;
  readonly #reject: (error: RemoteError) => void;
  readonly onEvent: ((json: Record<string, unknown>, payload: Uint8Array) => void) | undefined;
  readonly payloadInto: ((length: number) => Uint8Array | undefined) | undefined;
  readonly transientEvents: boolean;
  /** Whether this request leaves the host process free to exit once its first event arrived. */
  readonly background: boolean;
  /** Whether this request counts toward keeping the host process alive. */
  holdsRef = true;
  /** The abort listener, while one is attached. */
  onAbort: (() => void) | undefined;
  /** The deadline timer, while one runs. */
  timer: NodeJS.Timeout | undefined;

  constructor(
    session: Session,
    id: number,
    options: RequestOptions,
    resolve: (reply: Reply) => void,
    reject: (error: RemoteError) => void,
  ) {
    this.#session = session;
    this.#id = id;
    this.#signal = options.signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.onEvent = options.onEvent;
    this.payloadInto = options.payloadInto;
    this.transientEvents = options.transientEvents === true;
    this.background = options.background === true;
  }

  resolve(reply: Reply): void {
    this.#settle();
    this.#resolve(reply);
  }

  reject(error: RemoteError): void {
    this.#settle();
    this.#reject(error);
  }

  /** Stops counting toward keeping the host process alive. */
  releaseRef(): void {
    if (!this.holdsRef) return;
    this.holdsRef = false;
    this.#session.foreground--;
    this.#session.updateRef();
  }

  /** Counts toward keeping the host process alive again (a cancelled background request, until it settles). */
  holdRef(): void {
    if (this.holdsRef || !this.#session.pending.has(this.#id)) return;
    this.holdsRef = true;
    this.#session.foreground++;
    this.#session.updateRef();
  }

  #settle(): void {
    if (this.#session.pending.delete(this.#id)) this.releaseRef();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.onAbort !== undefined) this.#signal?.removeEventListener("abort", this.onAbort);
    this.#session.updateRef();
  }
}

interface Refable {
  ref(): void;
  unref(): void;
}

function refable(value: unknown): Refable | undefined {
  const candidate = value as Partial<Refable> | null | undefined;
  return typeof candidate?.ref === "function" && typeof candidate.unref === "function"
    ? (candidate as Refable)
    : undefined;
}

/** One start of the agent process. */
class Session {
  readonly id: number;
  readonly child: AgentProcess;
  readonly marker: Buffer;
  readonly writer: FrameWriter;
  readonly pending = new Map<number, Pending>();
  /** Pending requests that keep the host process alive (not `background`). */
  foreground = 0;
  readonly decoder = new FrameDecoder((type, id, length) => this.#payloadTarget(type, id, length));
  readonly stderr = new TextTail();
  live = true;
  ready = false;
  synced = false;
  exited = false;
  search: Buffer = Buffer.alloc(0);
  /** Monotonic time of the last byte received, so a wall-clock jump cannot fake silence. */
  lastSeen = performance.now();
  info: RemoteInfo | undefined;
  timers: NodeJS.Timeout[] = [];
  #referenced = true;

  constructor(id: number, child: AgentProcess, token: string) {
    this.id = id;
    this.child = child;
    this.marker = Buffer.from(`PI-ENV ${token}\n`, "utf8");
    this.writer = new FrameWriter(child.stdin);
  }

  #payloadTarget(type: number, id: number, length: number): Uint8Array | typeof TRANSIENT | undefined {
    const pending = this.pending.get(id);
    // A frame nobody waits for is dropped right after decoding.
    if (pending === undefined) return TRANSIENT;
    if (type === FrameType.event) return pending.transientEvents ? TRANSIENT : undefined;
    const into = type === FrameType.result ? pending.payloadInto : undefined;
    if (into === undefined) return undefined;
    try {
      return into(length);
    } catch {
      // A failing chooser only costs the copy it meant to save.
      return undefined;
    }
  }

  /** Keeps the host process alive only while a request is pending, so an idle agent never blocks its exit. */
  updateRef(): void {
    const wanted = this.live && this.foreground > 0;
    if (wanted === this.#referenced) return;
    this.#referenced = wanted;
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr]) {
      const target = refable(handle);
      if (wanted) target?.ref();
      else target?.unref();
    }
  }

  send(type: FrameTypeValue, id: number, json: Record<string, unknown>, payload?: Uint8Array): void {
    if (this.live) this.writer.write(encodeFrame(type, id, json, payload));
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
}

function stringField(json: Record<string, unknown>, key: string, fallback = ""): string {
  const value = json[key];
  return typeof value === "string" ? value : fallback;
}

function toRemoteInfo(json: Record<string, unknown>): RemoteInfo {
  const os = stringField(json, "os");
  const driveCwds: Record<string, string> = {};
  if (isWireObject(json.driveCwds)) {
    for (const [drive, dir] of Object.entries(json.driveCwds)) if (typeof dir === "string") driveCwds[drive] = dir;
  }
  return {
    protocol: PROTOCOL,
    version: stringField(json, "version"),
    os,
    arch: stringField(json, "arch"),
    home: stringField(json, "home"),
    separator: stringField(json, "separator", os === "windows" ? "\\" : "/"),
    tmpdir: stringField(json, "tmpdir"),
    cwd: stringField(json, "cwd"),
    driveCwds,
    pid: typeof json.pid === "number" ? json.pid : 0,
    features: Array.isArray(json.features)
      ? json.features.filter((feature): feature is string => typeof feature === "string")
      : [],
  };
}

/**
 * A connection to an Outpost agent (or any pi-env protocol 1 daemon) over a child process's stdio. The agent is
 * started on the first request and again on the first request after a loss; each start is a numbered session.
 */
export class Connection {
  readonly #command: ConnectionOptions["command"];
  readonly #launch: ConnectionOptions["launch"];
  readonly #onLog: ((text: string) => void) | undefined;
  readonly #pingIntervalMs: number;
  readonly #silenceLimitMs: number;
  readonly #startTimeoutMs: number;
  readonly #requestTimeoutMs: number | undefined;
  #nextId = 1;
  #sessionCount = 0;
  #current: Session | undefined;
  #starting: Promise<Session> | undefined;
  #closed = false;

  /** Creates the connection; nothing is started until the first request. */
  constructor(options: ConnectionOptions) {
    this.#command = options.command;
    this.#launch = options.launch;
    this.#onLog = options.onLog;
    this.#pingIntervalMs = options.pingIntervalMs ?? PING_INTERVAL_MS;
    this.#silenceLimitMs = options.silenceLimitMs ?? SILENCE_LIMIT_MS;
    this.#startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
    this.#requestTimeoutMs = options.requestTimeoutMs;
  }

  /** The agent's `hello` answer; starts the agent if needed. */
  async info(): Promise<RemoteInfo> {
    const session = await this.#ready();
    return session.info!;
  }

  /** The id of the live session, if the agent is running and ready. */
  session(): number | undefined {
    const current = this.#current;
    return current?.live && current.ready ? current.id : undefined;
  }

  /** Sends one request and resolves with its result; rejects with a {@link RemoteError}. */
  request(op: string, json: Record<string, unknown>, options: RequestOptions = {}): Promise<Reply> {
    const current = this.#current;
    // The usual case, a running agent, goes out in this turn without an extra await.
    if (!this.#closed && current?.live && current.ready && (options.session ?? current.id) === current.id) {
      return this.#send(current, op, json, options);
    }
    return this.#requestSlowly(op, json, options);
  }

  async #requestSlowly(op: string, json: Record<string, unknown>, options: RequestOptions): Promise<Reply> {
    if (this.#closed) throw closedError();
    let session: Session;
    if (options.session !== undefined) {
      const current = this.#current;
      // Handle-bound requests never reach a newer agent, whose handle numbers start again at 1.
      if (current === undefined || current.id !== options.session || !current.live || !current.ready) {
        throw lostError("outpost agent connection lost");
      }
      session = current;
    } else {
      session = await this.#ready();
      // close() may have run while this request waited for the start.
      if (this.#closed) throw closedError();
    }
    return this.#send(session, op, json, options);
  }

  /** Kills a running command without aborting it (a `{mode:"kill"}` cancel), if its session is still live. */
  kill(id: number, session: number): void {
    const current = this.#current;
    if (current === undefined || current.id !== session || !current.live) return;
    current.send(FrameType.cancel, id, { mode: "kill" });
  }

  /** Stops the agent; every later request rejects with "Connection closed". */
  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#current;
    if (session === undefined) return;
    this.#teardown(session, closedError());
    await waitForExit(session);
  }

  #ready(): Promise<Session> {
    if (this.#closed) return Promise.reject(closedError());
    const current = this.#current;
    if (current?.live && current.ready) return Promise.resolve(current);
    if (this.#starting === undefined) {
      const starting = this.#start();
      this.#starting = starting;
      const forget = () => {
        if (this.#starting === starting) this.#starting = undefined;
      };
      starting.then(forget, forget);
    }
    return this.#starting;
  }

  async #start(): Promise<Session> {
    const token = randomBytes(16).toString("hex");
    const child = await this.#startAgent(["serve", "--token", token]);
    if (this.#closed) {
      child.kill();
      throw closedError();
    }
    const session = new Session(++this.#sessionCount, child, token);
    this.#current = session;
    this.#attach(session);
    const startTimer = setTimeout(() => {
      this.#teardown(session, lostError(`outpost agent did not answer within ${this.#startTimeoutMs / 1000} s`));
    }, this.#startTimeoutMs);
    startTimer.unref();
    session.timers.push(startTimer);
    try {
      const hello = await this.#send(session, "hello", { protocol: PROTOCOL }, {});
      if (hello.json.protocol !== PROTOCOL) {
        throw lostError(`Unsupported protocol ${String(hello.json.protocol)}`);
      }
      session.info = toRemoteInfo(hello.json);
      session.ready = true;
      clearTimeout(startTimer);
      this.#startPings(session);
      return session;
    } catch (thrown) {
      const error = thrown instanceof RemoteError ? thrown : lostError(messageOf(thrown));
      this.#teardown(session, error);
      if (this.#closed) throw error;
      // Only this attempt's stderr: a retry must not show an older agent's complaints.
      const message = withStderrTail(error.message, session.stderr.toString());
      throw message === error.message ? error : new RemoteError(error.fields, message);
    }
  }

  async #startAgent(args: readonly string[]): Promise<AgentProcess> {
    if (this.#launch !== undefined) {
      try {
        return await this.#launch(args);
      } catch (thrown) {
        if (this.#closed) throw closedError();
        throw lostError(messageOf(thrown), "spawn_error");
      }
    }
    const argv = await this.#resolveCommand();
    if (this.#closed) throw closedError();
    try {
      return spawn(argv[0], [...argv.slice(1), ...args], { stdio: "pipe", windowsHide: true });
    } catch (thrown) {
      throw lostError(messageOf(thrown), "spawn_error");
    }
  }

  async #resolveCommand(): Promise<readonly string[]> {
    let argv: readonly string[];
    try {
      argv = typeof this.#command === "function" ? await this.#command() : (this.#command ?? []);
    } catch (thrown) {
      throw lostError(messageOf(thrown), "spawn_error");
    }
    if (!Array.isArray(argv) || argv.length === 0 || typeof argv[0] !== "string" || argv[0] === "") {
      throw lostError("No outpost agent command", "spawn_error");
    }
    return argv;
  }

  #attach(session: Session): void {
    const { child } = session;
    child.stdout.on("data", (chunk: Buffer) => this.#onStdout(session, chunk));
    child.stdout.on("end", () => {
      if (session.ready) this.#teardown(session, lostError("outpost agent connection lost"));
    });
    child.stdout.on("error", () => {});
    const stderrDecoder = new StringDecoder("utf8");
    child.stderr.on("data", (chunk: Buffer) => this.#onStderr(session, stderrDecoder.write(chunk)));
    child.stderr.on("end", () => this.#onStderr(session, stderrDecoder.end()));
    child.stderr.on("error", () => {});
    child.on("error", (error) => {
      this.#teardown(session, lostError(error.message, session.ready ? "unknown" : "spawn_error"));
    });
    child.on("exit", (code, signal) => {
      session.exited = true;
      // Once ready, a descendant holding our pipes must not keep requests hanging: the agent's exit is enough.
      if (session.ready) {
        this.#teardown(session, lostError("outpost agent connection lost"));
        return;
      }
      // Before ready, wait for `close` so the agent's last stderr (the reason it failed) is drained.
      const drain = setTimeout(() => this.#failStart(session, code, signal), EXIT_DRAIN_MS);
      drain.unref();
      session.timers.push(drain);
    });
    child.on("close", (code, signal) => {
      session.exited = true;
      if (session.ready) this.#teardown(session, lostError("outpost agent connection lost"));
      else this.#failStart(session, code, signal);
    });
  }

  #failStart(session: Session, code: number | null, signal: NodeJS.Signals | null): void {
    this.#teardown(session, lostError(`outpost agent ${describeExit(code, signal)} before it was ready`));
  }

  #onStderr(session: Session, text: string): void {
    if (text === "") return;
    if (!session.ready) session.stderr.append(text);
    this.#log(text);
  }

  #log(text: string): void {
    try {
      this.#onLog?.(text);
    } catch {
      // A logging callback must not break the connection.
    }
  }

  #onStdout(session: Session, chunk: Buffer): void {
    if (!session.live) return;
    session.lastSeen = performance.now();
    let data = chunk;
    if (!session.synced) {
      const rest = this.#searchMarker(session, chunk);
      if (rest === undefined) return;
      data = rest;
    }
    try {
      // Each frame is dispatched before the next is decoded (transient event payloads rely on it).
      session.decoder.each(data, (frame) => {
        if (session.live) this.#dispatch(session, frame);
      });
    } catch (error) {
      if (!(error instanceof CorruptFrameError)) throw error;
      this.#teardown(session, lostError("Corrupt frame from outpost agent"));
    }
  }

  /** Looks for the marker line; returns the bytes after it, or `undefined` while it has not arrived. */
  #searchMarker(session: Session, chunk: Buffer): Buffer | undefined {
    const search = session.search.length === 0 ? chunk : Buffer.concat([session.search, chunk]);
    const index = search.indexOf(session.marker);
    if (index < 0) {
      session.search =
        search.length > SYNC_SEARCH_LIMIT
          ? Buffer.from(search.subarray(search.length - session.marker.length))
          : search;
      return undefined;
    }
    session.synced = true;
    session.search = Buffer.alloc(0);
    const noise = search.subarray(0, index).toString("utf8").trim();
    if (noise !== "") this.#log(noise);
    return search.subarray(index + session.marker.length);
  }

  #dispatch(session: Session, frame: Frame): void {
    const pending = session.pending.get(frame.id);
    if (pending === undefined || frame.id === 0) return;
    switch (frame.type) {
      case FrameType.result:
        pending.resolve({ json: frame.json, payload: frame.payload, session: session.id });
        return;
      case FrameType.error:
        pending.reject(new RemoteError(frame.json));
        return;
      case FrameType.event:
        if (pending.background) pending.releaseRef();
        try {
          pending.onEvent?.(frame.json, frame.payload);
        } catch {
          // A listener's failure is its own business; it must never take the stream handler down.
        }
        return;
      default:
        // Pings, and frame types a client never receives, are ignored.
        return;
    }
  }

  #send(session: Session, op: string, json: Record<string, unknown>, options: RequestOptions): Promise<Reply> {
    if (!session.live) return Promise.reject(lostError("outpost agent connection lost"));
    const id = this.#allocateId();
    let pieces: Uint8Array[];
    try {
      pieces = encodeFrame(FrameType.request, id, { ...json, op }, options.payload);
    } catch (thrown) {
      return Promise.reject(new RemoteError({ code: "unknown", message: messageOf(thrown) }));
    }
    let pending: Pending | undefined;
    const promise = new Promise<Reply>((resolve, reject) => {
      pending = new Pending(session, id, options, resolve, reject);
    });
    // The executor ran synchronously; the promise exists only to carry the outcome.
    const request = pending!;
    session.pending.set(id, request);
    session.foreground++;
    session.updateRef();
    try {
      options.onStart?.(id, session.id);
    } catch (thrown) {
      request.reject(new RemoteError({ code: "unknown", message: messageOf(thrown) }));
      return promise;
    }
    session.writer.write(pieces);
    const { signal } = options;
    if (signal !== undefined) {
      if (signal.aborted) {
        session.send(FrameType.cancel, id, {});
      } else {
        request.onAbort = () => {
          session.send(FrameType.cancel, id, {});
          // Whoever cancels a background request waits for it to end: keep the process alive until it does.
          request.holdRef();
        };
        signal.addEventListener("abort", request.onAbort, { once: true });
      }
    }
    const timeoutMs = options.timeoutMs ?? (LONG_RUNNING_OPS.has(op) ? undefined : this.#requestTimeoutMs);
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      request.timer = setTimeout(() => {
        request.reject(
          new RemoteError({
            code: "unknown",
            lost: true,
            timedOut: true,
            message: `outpost agent did not answer ${op} within ${timeoutMs} ms`,
          }),
        );
        if (session.live) session.send(FrameType.cancel, id, {});
      }, timeoutMs);
      // The pending request keeps the process alive as long as it should; the timer itself must not.
      request.timer.unref();
    }
    return promise;
  }

  #allocateId(): number {
    const id = this.#nextId;
    this.#nextId = id >= MAX_REQUEST_ID ? 1 : id + 1;
    return id;
  }

  #startPings(session: Session): void {
    let lastTick = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      // A tick that comes late means our own event loop was blocked; bytes may be waiting unread, so do not judge.
      const late = now - lastTick > 2 * this.#pingIntervalMs;
      lastTick = now;
      if (!late && now - session.lastSeen > this.#silenceLimitMs) {
        this.#teardown(session, lostError("outpost agent connection timed out"));
        return;
      }
      session.send(FrameType.ping, 0, {});
    }, this.#pingIntervalMs);
    timer.unref();
    session.timers.push(timer);
  }

  #teardown(session: Session, error: RemoteError): void {
    if (!session.live) return;
    session.live = false;
    for (const timer of session.timers) clearTimeout(timer);
    session.timers = [];
    if (this.#current === session) this.#current = undefined;
    session.writer.end();
    try {
      session.child.kill();
    } catch {
      // Already gone.
    }
    const pending = [...session.pending.values()];
    session.pending.clear();
    session.foreground = 0;
    for (const request of pending) request.reject(error);
    // The pipes may stay open in a descendant of the agent; they must not keep the host process alive.
    session.updateRef();
    for (const stream of [session.child.stdout, session.child.stderr]) refable(stream)?.unref();
  }
}

function waitForExit(session: Session): Promise<void> {
  const { child } = session;
  // A child process that never got a pid failed to spawn and will never exit.
  const neverStarted = child instanceof ChildProcess && child.pid === undefined;
  if (session.exited || neverStarted || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    // Whoever awaits close() wants to see the exit: keep the event loop alive until it comes.
    child.ref();
    const kill = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, CLOSE_KILL_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
  });
}
