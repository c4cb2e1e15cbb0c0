/**
 * The client end of the agent's protocol: starts the agent lazily from a command, synchronizes on its marker line,
 * multiplexes requests over frames, and restarts the agent after a loss. A session (`agent-session.ts`) is one
 * start of the agent; `session-lifetime.ts` keeps it alive with pings and tears it down.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { PROTOCOL, type RemoteInfo, toRemoteInfo } from "./agent-hello.js";
import { AgentSession } from "./agent-session.js";
import type { AgentProcess, ConnectionOptions, Reply, RequestOptions } from "./connection-types.js";
import { CorruptFrameError, encodeFrame, type Frame, FrameType } from "./frame.js";
import { PendingRequest } from "./pending-request.js";
import { closedError, lostError, messageOf, RemoteError } from "./remote-error.js";
import { sameHostFdDir } from "./same-host.js";
import { endSession, PING_INTERVAL_MS, SILENCE_LIMIT_MS, startPings, stopAfterGrace } from "./session-lifetime.js";
import { withStderrTail } from "./stderr-tail.js";

// The connection's vocabulary, so that its users import one module.
export type { RemoteInfo } from "./agent-hello.js";
export type { AgentProcess, ConnectionOptions, Reply, RequestOptions } from "./connection-types.js";
export { isConnectionLost, RemoteError } from "./remote-error.js";

/** Operations that last as long as their command or watcher: no default deadline applies to them. */
const LONG_RUNNING_OPS = new Set(["exec", "watch"]);
const START_TIMEOUT_MS = 60_000;
/** How long a not-yet-ready agent that exited may keep its pipes open (via a descendant) before we give up. */
const EXIT_DRAIN_MS = 2_000;
/** Noise before the marker line is kept up to this size while searching. */
const SYNC_SEARCH_LIMIT = 1024 * 1024;
const MAX_REQUEST_ID = 0xffff_ffff;

/**
 * A connection to an Outpost agent (or any pi-env protocol 1 daemon) over a child process's stdio. The agent is
 * started on the first request and again on the first request after a loss; each start is a numbered session.
 */
export class Connection {
  readonly #command: ConnectionOptions["command"];
  readonly #launch: ConnectionOptions["launch"];
  readonly #onLog: ((text: string) => void) | undefined;
  readonly #sameHost: boolean;
  readonly #pingIntervalMs: number;
  readonly #silenceLimitMs: number;
  readonly #startTimeoutMs: number;
  readonly #requestTimeoutMs: number | undefined;
  readonly #closeGraceMs: number;
  #nextId = 1;
  #sessionCount = 0;
  #current: AgentSession | undefined;
  #starting: Promise<AgentSession> | undefined;
  #closed = false;

  /** Creates the connection; nothing is started until the first request. */
  constructor(options: ConnectionOptions) {
    this.#command = options.command;
    this.#launch = options.launch;
    this.#onLog = options.onLog;
    this.#sameHost = options.sameHost === true && options.launch === undefined;
    this.#pingIntervalMs = options.pingIntervalMs ?? PING_INTERVAL_MS;
    this.#silenceLimitMs = options.silenceLimitMs ?? SILENCE_LIMIT_MS;
    this.#startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#closeGraceMs = options.closeGraceMs ?? 0;
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

  /**
   * The agent's `/proc/<pid>/fd` when `session` (default: the live one) is live and the same-host shortcut applies
   * to it (see {@link ConnectionOptions.sameHost}); undefined otherwise.
   */
  sameHostFdDir(session?: number): string | undefined {
    const current = this.#current;
    if (current === undefined || !current.live || !current.ready) return undefined;
    return session === undefined || session === current.id ? current.fdDir : undefined;
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
    let session: AgentSession;
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

  /**
   * Stops the agent; every later request rejects with "Connection closed". Pending requests reject at once; the
   * agent's input ends, it gets `closeGraceMs` to exit by itself, then SIGTERM and, 3 s later, SIGKILL.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#current;
    if (session === undefined) return;
    if (session.live) {
      this.#current = undefined;
      endSession(session, closedError(), false);
    }
    await stopAfterGrace(session, this.#closeGraceMs);
  }

  #ready(): Promise<AgentSession> {
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

  async #start(): Promise<AgentSession> {
    const token = randomBytes(16).toString("hex");
    const child = await this.#startAgent(["serve", "--token", token]);
    if (this.#closed) {
      child.kill();
      throw closedError();
    }
    const session = new AgentSession(++this.#sessionCount, child, token);
    this.#current = session;
    this.#attach(session);
    const startTimer = setTimeout(() => {
      this.#teardown(session, lostError(`outpost agent did not answer within ${this.#startTimeoutMs / 1000} s`));
    }, this.#startTimeoutMs);
    startTimer.unref();
    session.timers.push(startTimer);
    try {
      // The start timer bounds the hello: requestTimeoutMs is for requests, not for starting the agent.
      const hello = await this.#send(session, "hello", { protocol: PROTOCOL }, { timeoutMs: Number.POSITIVE_INFINITY });
      if (hello.json.protocol !== PROTOCOL) {
        throw lostError(`Unsupported protocol ${String(hello.json.protocol)}`);
      }
      session.info = toRemoteInfo(hello.json);
      if (this.#sameHost) session.fdDir = sameHostFdDir(child.pid, session.info);
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

  #attach(session: AgentSession): void {
    const { child } = session;
    child.stdout.on("data", (chunk: Buffer) => this.#onStdout(session, chunk));
    child.stdout.on("end", () => {
      if (session.ready) this.#teardown(session, lostError("outpost agent connection lost"));
    });
    child.stdout.on("error", () => {});
    // A launcher that read ahead (a line before the agent's own output) leaves the stream paused with the rest
    // put back: a 'data' listener alone does not restart an explicitly paused stream.
    child.stdout.resume();
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

  #failStart(session: AgentSession, code: number | null, signal: NodeJS.Signals | null): void {
    this.#teardown(session, lostError(`outpost agent ${describeExit(code, signal)} before it was ready`));
  }

  #onStderr(session: AgentSession, text: string): void {
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

  #onStdout(session: AgentSession, chunk: Buffer): void {
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
  #searchMarker(session: AgentSession, chunk: Buffer): Buffer | undefined {
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

  #dispatch(session: AgentSession, frame: Frame): void {
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

  #send(session: AgentSession, op: string, json: Record<string, unknown>, options: RequestOptions): Promise<Reply> {
    if (!session.live) return Promise.reject(lostError("outpost agent connection lost"));
    const id = this.#allocateId();
    let pieces: Uint8Array[];
    try {
      pieces = encodeFrame(FrameType.request, id, { ...json, op }, options.payload);
    } catch (thrown) {
      return Promise.reject(new RemoteError({ code: "unknown", message: messageOf(thrown) }));
    }
    let pending: PendingRequest | undefined;
    const promise = new Promise<Reply>((resolve, reject) => {
      pending = new PendingRequest(session, id, options, resolve, reject);
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

  #startPings(session: AgentSession): void {
    startPings(session, this.#pingIntervalMs, this.#silenceLimitMs, () => {
      this.#teardown(session, lostError("outpost agent connection timed out"));
    });
  }

  #teardown(session: AgentSession, error: RemoteError): void {
    if (!session.live) return;
    if (this.#current === session) this.#current = undefined;
    endSession(session, error);
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
}
