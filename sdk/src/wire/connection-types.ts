/**
 * The types of `Connection`'s API: the agent process it drives, how it starts one, and what a request takes and
 * gives back.
 */
import type { Readable, Writable } from "node:stream";

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
  /** The process id, when it is a process of this machine. */
  readonly pid?: number;
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
  /**
   * The agent is a process of this machine, spawned from `command` (`LocalExecutionEnv` sets this). On Linux,
   * whole-file reads and writes larger than one request then move their bytes through the agent's open file
   * reopened by this process (`/proc/<pid>/fd/<n>`), not through the pipe, when the agent offers it (hello feature
   * `handle.fd`) and its pid is the spawned process's. Ignored with `launch`.
   */
  sameHost?: boolean;
  /** Receives the agent's stderr as it arrives and any non-blank output printed before its marker line. */
  onLog?: (text: string) => void;
  /** @internal Ping interval (default 5 s); tests shorten it. */
  pingIntervalMs?: number;
  /** @internal Silence after which the connection counts as lost (default 30 s); tests shorten it. */
  silenceLimitMs?: number;
  /** @internal Time the agent has to print its marker and answer `hello` (default 60 s). */
  startTimeoutMs?: number;
  /**
   * How long `close()` lets the agent exit by itself once its input has ended, before the process is signalled
   * (default 0: at once). For an agent behind a client that does not pass signals on — `podman exec` dies of
   * SIGTERM and leaves the agent running in the container — the end of its input is the only way to stop it.
   * `close()` still ends within this grace plus the kill bound (SIGTERM, SIGKILL 3 s later).
   */
  closeGraceMs?: number;
  /**
   * Bounds, in milliseconds, how long each request other than `exec` and `watch` (which last as long as their
   * command or watcher) may wait for its answer; starting the agent is not a request (the start has its own
   * timeout). Default: none, as Node's file operations have none — an agent that keeps pinging but never answers
   * would leave the request waiting. A request that runs out of time fails as lost (`{lost: true, timedOut:
   * true}`: its outcome is unknown), a cancel is sent for it, and a late answer is ignored.
   * `RequestOptions.timeoutMs` overrides it per request.
   */
  requestTimeoutMs?: number;
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
