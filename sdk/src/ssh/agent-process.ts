/**
 * The agent started over an SSH exec channel, shaped like the child process `Connection` otherwise spawns: its
 * stdio are the channel's streams, its exit is the channel's exit status, and killing it closes the channel and the
 * SSH connection (the remote agent then sees the end of its input and exits, taking its commands with it).
 */
import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { ClientChannel } from "ssh2";
import type { AgentProcess } from "../wire/connection.js";
import type { OpenRoute } from "./client.js";

/** An agent running at the end of an SSH connection. */
export class SshAgentProcess extends EventEmitter implements AgentProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly #route: OpenRoute;
  readonly #channel: ClientChannel;
  #exited = false;
  #closed = false;

  constructor(route: OpenRoute, channel: ClientChannel) {
    super();
    this.#route = route;
    this.#channel = channel;
    this.stdin = channel;
    this.stdout = channel;
    this.stderr = channel.stderr;
    channel.on("exit", (code: number | null, signal?: string) => {
      this.exitCode = typeof code === "number" ? code : null;
      this.signalCode = typeof signal === "string" ? (`SIG${signal}` as NodeJS.Signals) : null;
      this.#exit();
    });
    channel.on("close", () => this.#close());
    // A dropped connection may never deliver the channel's close: the client's is enough.
    route.client.on("close", () => this.#close());
    route.client.on("error", () => this.#close());
  }

  #exit(): void {
    if (this.#exited) return;
    this.#exited = true;
    this.emit("exit", this.exitCode, this.signalCode);
  }

  #close(): void {
    if (this.#closed) return;
    this.#exit();
    this.#closed = true;
    this.#route.close();
    this.emit("close", this.exitCode, this.signalCode);
  }

  /** Closes the channel and the connection; the signal is not sent (a remote agent exits when its input ends). */
  kill(): boolean {
    if (this.#closed) return false;
    this.#channel.close();
    this.#route.close();
    return true;
  }

  /** Lets the SSH connection keep this process alive (while requests are pending). */
  ref(): void {
    this.#route.socket.ref();
  }

  /** Lets this process exit even though the SSH connection is open. */
  unref(): void {
    this.#route.socket.unref();
  }
}
