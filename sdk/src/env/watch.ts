/**
 * `RemoteWatcher`: a `FileWatcher` served by the agent's port of Durable's `NodeFileWatcher` (protocol 1's `watch`
 * op). The agent snapshots, rescans and reports; this side relays its events to `onChange` and, when the agent is
 * lost, opens the same watch again once a new agent runs and reports an overflow for what it could not see.
 */

import { FileError } from "../contract/errors.js";
import { toFileError } from "../contract/file-errors.js";
import type { FileWatcher, WatchChange, WatchTarget } from "../contract/types.js";
import { type Connection, isConnectionLost, RemoteError } from "../wire/connection.js";

/** Options of a watch, as `NodeExecutionEnv`'s `watch` option. */
export interface RemoteWatchOptions {
  /** Forces native watching or polling; by default the agent polls on Windows and network or FUSE file systems. */
  mode?: "native" | "polling";
  /** Time between snapshots in polling mode (default 2000 ms). */
  pollIntervalMs?: number;
  /** Most directories one watcher covers (default 10,000); more fail it with `invalid`. */
  maxDirectories?: number;
  /**
   * @internal Test hook: the agent's native watcher number `nativeWatchLimit + 1` fails as if the kernel had run
   * out of watches (ENOSPC), which switches the watcher to polling with an overflow.
   */
  nativeWatchLimit?: number;
}

/** First wait before reopening a watch after the agent was lost; it doubles up to the maximum. */
const REOPEN_FIRST_MS = 1_000;
const REOPEN_MAX_MS = 30_000;

type Mode = "native" | "polling";

/** The wire form of a target: absolute path, plain booleans, a names list. */
function wireTarget(target: WatchTarget, path: string): Record<string, unknown> {
  return {
    path,
    recursive: target.recursive === true,
    exclude: {
      hidden: target.exclude?.hidden === true,
      names: [...(target.exclude?.names ?? [])].filter((name) => typeof name === "string"),
    },
  };
}

/** The `{error}` of an agent's error event (`permission_denied` or `invalid`). */
function eventError(json: Record<string, unknown>): FileError {
  const message = typeof json.message === "string" ? json.message : "Watch failed";
  return new FileError(json.code === "permission_denied" ? "permission_denied" : "invalid", message);
}

/** A watch request of one agent session, until it ends. */
interface Opening {
  /** Settles at the agent's `ready`; rejects if the request fails first. */
  ready: Promise<void>;
  /** Settles when the request ends (resolved with its failure, or undefined). */
  ended: Promise<unknown>;
}

/** A running watch on the agent. */
export class RemoteWatcher implements FileWatcher {
  readonly #connection: Connection;
  readonly #request: Record<string, unknown>;
  readonly #onChange: (change: WatchChange) => void;
  #mode: Mode = "native";
  #closed = false;
  #controller = new AbortController();
  #ended: Promise<unknown> = Promise.resolve();
  #wake: (() => void) | undefined;
  #running: Promise<void> = Promise.resolve();

  private constructor(connection: Connection, request: Record<string, unknown>, onChange: (c: WatchChange) => void) {
    this.#connection = connection;
    this.#request = request;
    this.#onChange = onChange;
  }

  /**
   * Opens the watch; resolves once the agent established coverage. Rejects with the agent's failure (a budget
   * over `maxDirectories`, a permission error, a lost connection).
   */
  static async open(
    connection: Connection,
    targets: readonly WatchTarget[],
    resolved: readonly string[],
    onChange: (change: WatchChange) => void,
    options: RemoteWatchOptions = {},
  ): Promise<RemoteWatcher> {
    const request: Record<string, unknown> = {
      targets: targets.map((target, index) => wireTarget(target, resolved[index])),
    };
    for (const key of ["mode", "pollIntervalMs", "maxDirectories", "nativeWatchLimit"] as const) {
      if (options[key] !== undefined) request[key] = options[key];
    }
    const watcher = new RemoteWatcher(connection, request, onChange);
    const opening = watcher.#start();
    await opening.ready;
    watcher.#running = watcher.#follow(opening);
    return watcher;
  }

  /** The current mode: native watching can switch to polling at run time. */
  get mode(): Mode {
    return this.#mode;
  }

  /** Stops the watch; no `onChange` call starts after it resolves. Idempotent, never fails. */
  async close(_context?: unknown): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#wake?.();
      this.#controller.abort();
    }
    await this.#ended;
    await this.#running;
  }

  /** Sends the watch request on the current (or a new) agent. */
  #start(): Opening {
    let markReady: () => void = () => {};
    let failReady: (error: unknown) => void = () => {};
    let isReady = false;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    const request = this.#connection.request("watch", this.#request, {
      signal: this.#controller.signal,
      background: true,
      onEvent: (json) => {
        if (json.kind === "ready") {
          if (json.mode === "polling" || json.mode === "native") this.#mode = json.mode;
          isReady = true;
          markReady();
        } else {
          this.#event(json);
        }
      },
    });
    const ended = request.then(
      () => undefined,
      (error: unknown) => error,
    );
    this.#ended = ended;
    void ended.then((failure) => {
      if (isReady) return;
      // An agent that ends the request before it is ready is going away.
      failReady(failure ?? new RemoteError({ code: "unknown", message: "outpost agent connection lost", lost: true }));
    });
    return { ready, ended };
  }

  /** Relays one change or error event of the agent. */
  #event(json: Record<string, unknown>): void {
    if (json.kind === "change") {
      if (json.overflow === true) {
        if (json.mode === "polling") this.#mode = "polling";
        this.#deliver({ overflow: true });
      } else if (Array.isArray(json.paths)) {
        this.#deliver({ paths: json.paths.filter((path): path is string => typeof path === "string") });
      }
    } else if (json.kind === "error") {
      this.#deliver({ error: eventError(json) });
      this.#closed = true;
    }
  }

  #deliver(change: WatchChange): void {
    if (this.#closed) return;
    try {
      this.#onChange(change);
    } catch {
      // A failing callback is the caller's business; watching goes on, as with Node's watcher.
    }
  }

  /**
   * Waits for the request to end; while the watcher is open, a lost agent means opening the watch again on a new
   * one (waiting 1 s, 2 s, 4 s … up to 30 s between attempts), and then an overflow: changes made meanwhile were
   * not seen. Any other failure is the watcher's last change.
   */
  async #follow(opening: Opening): Promise<void> {
    let failure = await opening.ended;
    let delay = REOPEN_FIRST_MS;
    while (!this.#closed) {
      // An agent that ended the request without an error event (it is shutting down) counts as lost too.
      if (failure !== undefined && !isConnectionLost(failure)) {
        this.#deliver({ error: toFileError(failure) });
        this.#closed = true;
        return;
      }
      await this.#sleep(delay);
      if (this.#closed) return;
      delay = Math.min(delay * 2, REOPEN_MAX_MS);
      const next = this.#start();
      try {
        await next.ready;
      } catch (error) {
        failure = error;
        continue;
      }
      this.#deliver({ overflow: true });
      delay = REOPEN_FIRST_MS;
      failure = await next.ended;
    }
  }

  /** Waits `ms` (without keeping the process alive); `close()` cuts it short. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}
