/**
 * The agent started over an SSH exec channel, shaped like the child process `Connection` otherwise spawns: its
 * stdio are the channel's streams, its exit is the channel's exit status, and killing it closes the channel (the
 * remote agent then sees the end of its input and exits, taking its commands with it) and lets go of the shared SSH
 * connection, which closes when nothing else uses it.
 */
import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { ClientChannel } from "ssh2";
import type { AgentProcess } from "../wire/connection.js";
import { AGENT_RECEIVE_WINDOW, keepReceiveWindow } from "./receive-window.js";
import type { Lease } from "./route-pool.js";

/** An agent running at the end of an SSH connection. */
export class SshAgentProcess extends EventEmitter implements AgentProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly #lease: Lease;
  readonly #channel: ClientChannel;
  #exited = false;
  #closed = false;
  #killed = false;

  constructor(lease: Lease, channel: ClientChannel) {
    super();
    this.#lease = lease;
    const route = lease.route;
    this.#channel = channel;
    // Downloads on a lossy path would otherwise stop at ssh2's 2 MiB window (receive-window.ts).
    keepReceiveWindow(channel, AGENT_RECEIVE_WINDOW);
    this.stdin = channel;
    this.stdout = channel;
    this.stderr = channel.stderr;
    channel.on("exit", (code: number | null, signal?: string) => {
      this.exitCode = typeof code === "number" ? code : null;
      this.signalCode = typeof signal === "string" ? (`SIG${signal}` as NodeJS.Signals) : null;
      this.#exit();
    });
    channel.on("close", () => this.#close());
    // A dropped connection may never deliver the channel's close: the client's is enough. The client is shared
    // with other agents, so the listeners go when this agent closes.
    const onClientGone = () => this.#close();
    route.client.on("close", onClientGone);
    route.client.on("error", onClientGone);
    this.#forgetClient = () => {
      route.client.removeListener("close", onClientGone);
      route.client.removeListener("error", onClientGone);
    };
  }

  readonly #forgetClient: () => void;

  #exit(): void {
    if (this.#exited) return;
    this.#exited = true;
    this.emit("exit", this.exitCode, this.signalCode);
  }

  #close(): void {
    if (this.#closed) return;
    this.#exit();
    this.#closed = true;
    this.#forgetClient();
    this.#lease.release();
    this.emit("close", this.exitCode, this.signalCode);
  }

  /**
   * Closes the channel and lets go of the connection; the signal is not sent (a remote agent exits when its input
   * ends).
   */
  kill(): boolean {
    if (this.#closed || this.#killed) return false;
    this.#killed = true;
    this.#channel.close();
    // Not waiting for the server's answer: the connection may be the one that hangs. After this turn, as a
    // child process's events come.
    queueMicrotask(() => this.#close());
    return true;
  }

  /** Lets the SSH connection keep this process alive (while requests are pending). */
  ref(): void {
    this.#lease.keepAlive(true);
  }

  /** Lets this process exit even though the SSH connection is open (for this agent's part). */
  unref(): void {
    this.#lease.keepAlive(false);
  }
}
