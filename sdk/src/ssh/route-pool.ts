/**
 * One SSH connection per host serves every env and every agent started on it (spec/semantics.md SSH7): routes are
 * shared by a key that says what the connection was opened with (the route's hops and users, the trust files, the
 * credentials, the timeouts), so `connectSsh` twice to the same target with the same options opens one connection.
 * A connection is closed as soon as its last user lets go; one that drops leaves the pool and the next start opens
 * a new one. A server caps the sessions of one connection (OpenSSH's `MaxSessions`, 10 by default): when it refuses
 * a channel, that connection is marked full and the channel is opened on another one.
 */
import type { ClientChannel } from "ssh2";
import type { OpenRoute } from "./client.js";
import { SshError } from "./errors.js";
import { retryRefusedExec } from "./remote-command.js";
import { ssh2Call } from "./ssh2-call.js";

/** A shared connection and who uses it. */
interface Pooled {
  route: OpenRoute;
  /** Leases held on it. */
  users: number;
  /** Leases that want the connection to keep this process alive. */
  keepingAlive: Set<Lease>;
  /** The server refused a channel on it: new channels go elsewhere. */
  full: boolean;
  closed: boolean;
}

/** A hold on a pooled connection: exec channels on it, and release when done. */
export interface Lease {
  /** The connection this lease holds (it may move to another one when the server refuses a channel). */
  readonly route: OpenRoute;
  /** Opens an exec channel running `command`, on another connection of the pool if this one is full. */
  exec(command: string): Promise<ClientChannel>;
  /** Another lease on the same connection, for what outlives this one (a started agent). */
  hold(): Lease;
  /** Whether this lease keeps the process alive (default yes). */
  keepAlive(wanted: boolean): void;
  release(): void;
}

/** ssh2's error for a channel the server refused to open (`SSH_MSG_CHANNEL_OPEN_FAILURE`). */
function isRefusedChannel(error: unknown): boolean {
  return error instanceof SshError && /open failure|open failed/i.test(String(error.cause ?? error.message));
}

export class RoutePool {
  readonly #routes = new Map<string, Pooled[]>();
  readonly #opening = new Map<string, Promise<Pooled>>();

  /** A lease on a connection for `key`, opening one with `open` when none has room. */
  async lease(key: string, open: () => Promise<OpenRoute>): Promise<Lease> {
    return this.#leaseOn(key, await this.#pick(key, open), open);
  }

  /** How many connections are open for `key` (for tests and the bench). */
  connections(key: string): number {
    return (this.#routes.get(key) ?? []).filter((pooled) => !pooled.closed).length;
  }

  async #pick(key: string, open: () => Promise<OpenRoute>): Promise<Pooled> {
    const usable = (this.#routes.get(key) ?? []).find((pooled) => !pooled.closed && !pooled.full);
    if (usable !== undefined) return usable;
    const pending = this.#opening.get(key);
    if (pending !== undefined) return pending;
    const opening = this.#open(key, open);
    this.#opening.set(key, opening);
    try {
      return await opening;
    } finally {
      this.#opening.delete(key);
    }
  }

  async #open(key: string, open: () => Promise<OpenRoute>): Promise<Pooled> {
    const route = await open();
    // Every agent on the connection listens for its close and errors until the agent closes; the server bounds how
    // many there are (its sessions per connection), not a fixed count here.
    route.client.setMaxListeners(0);
    const pooled: Pooled = { route, users: 0, keepingAlive: new Set(), full: false, closed: false };
    const list = this.#routes.get(key) ?? [];
    list.push(pooled);
    this.#routes.set(key, list);
    const forget = () => {
      pooled.closed = true;
      const rest = (this.#routes.get(key) ?? []).filter((other) => other !== pooled);
      if (rest.length === 0) this.#routes.delete(key);
      else this.#routes.set(key, rest);
    };
    route.client.once("close", forget);
    route.socket.once("close", forget);
    return pooled;
  }

  #leaseOn(key: string, first: Pooled, open: () => Promise<OpenRoute>): Lease {
    let pooled = first;
    let released = false;
    pooled.users += 1;
    const pool = this;
    const lease: Lease = {
      get route() {
        return pooled.route;
      },
      async exec(command) {
        for (;;) {
          try {
            return await execOn(pooled.route, command);
          } catch (error) {
            if (!isRefusedChannel(error)) throw error;
            // The server caps this connection's sessions: move to another connection of the pool.
            pooled.full = true;
            const next = await pool.#pick(key, open);
            if (next === pooled) throw error;
            pool.#drop(pooled, lease);
            pooled = next;
            pooled.users += 1;
          }
        }
      },
      hold() {
        return pool.#leaseOn(key, pooled, open);
      },
      keepAlive(wanted) {
        if (wanted) pooled.keepingAlive.add(lease);
        else pooled.keepingAlive.delete(lease);
        pool.#applyKeepAlive(pooled);
      },
      release() {
        if (released) return;
        released = true;
        pool.#drop(pooled, lease);
      },
    };
    lease.keepAlive(true);
    return lease;
  }

  #drop(pooled: Pooled, lease: Lease): void {
    pooled.users -= 1;
    pooled.keepingAlive.delete(lease);
    if (pooled.users > 0) {
      this.#applyKeepAlive(pooled);
      return;
    }
    pooled.closed = true;
    pooled.route.close();
  }

  #applyKeepAlive(pooled: Pooled): void {
    if (pooled.closed) return;
    if (pooled.keepingAlive.size > 0) pooled.route.socket.ref();
    else pooled.route.socket.unref();
  }
}

function execOn(route: OpenRoute, command: string): Promise<ClientChannel> {
  return retryRefusedExec(() =>
    ssh2Call<ClientChannel>(
      (done) => route.client.exec(command, done),
      (error) => new SshError("remote", `Cannot run a command over SSH: ${error.message}`, error),
    ),
  );
}
