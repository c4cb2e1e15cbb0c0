/**
 * The slice of the agent connection file operations use, and handles (open files and directories on the agent)
 * bound to the session that opened them.
 */
import type { FileHandle } from "node:fs/promises";
import { numberField } from "../wire/wire.js";

/** A successful reply: its JSON, its raw payload and the agent session that answered. */
export interface AgentReply {
  json: Record<string, unknown>;
  payload: Uint8Array;
  session: number;
}

/** Per-request options: payload bytes, an abort signal the agent can observe, the session a handle belongs to. */
export interface AgentRequestOptions {
  payload?: Uint8Array;
  signal?: AbortSignal;
  session?: number;
  /** May name the memory the result's payload is decoded into (see `RequestOptions.payloadInto`). */
  payloadInto?: (length: number) => Uint8Array | undefined;
}

/** Sends one request to the agent; the `Connection` is one. Rejects with the agent's error (a `RemoteError`). */
export interface AgentLink {
  request(op: string, json: Record<string, unknown>, options?: AgentRequestOptions): Promise<AgentReply>;
  /**
   * The agent's `/proc/<pid>/fd` when the agent of `session` (default: the live one) runs on this machine and
   * offers the same-host shortcut (see same-host.ts); undefined otherwise.
   */
  sameHostFdDir?(session?: number): string | undefined;
}

/**
 * An open file or directory on the agent. Every request names the session that opened it, so after the agent
 * restarted the request fails as lost instead of reaching the new agent, whose handle numbers start at 1 again.
 */
export class RemoteHandle {
  readonly #link: AgentLink;
  readonly #id: number;
  readonly #session: number;
  /** The same file reopened by this process (the same-host shortcut), which then does the reads. */
  #local: FileHandle | undefined;

  constructor(link: AgentLink, id: number, session: number) {
    this.#link = link;
    this.#id = id;
    this.#session = session;
  }

  /** The handle named by a reply (`{handle}`), bound to the reply's session. */
  static fromReply(link: AgentLink, reply: AgentReply): RemoteHandle {
    return new RemoteHandle(link, numberField(reply.json, "handle"), reply.session);
  }

  /** Lets this process's own descriptor of the same file do the reads, and closes it with the handle (same-host.ts). */
  useLocal(file: FileHandle | undefined): void {
    this.#local = file;
  }

  /** Sends an operation on this handle. */
  request(op: string, json: Record<string, unknown> = {}, options: AgentRequestOptions = {}): Promise<AgentReply> {
    return this.#link.request(op, { ...json, handle: this.#id }, { ...options, session: this.#session });
  }

  /**
   * Reads up to `length` bytes at `offset`, or at the current position (one `read()`) when `offset` is undefined.
   * `into` may name the memory the bytes land in, as `payloadInto` does.
   */
  async pread(
    offset: number | undefined,
    length: number,
    into?: (length: number) => Uint8Array | undefined,
  ): Promise<Uint8Array> {
    if (this.#local !== undefined) {
      // Straight into the caller's memory when it names some: ReadAhead never lets a read it abandoned share memory
      // with a later one (see its #issue). A position of null reads at this descriptor's own position, which only
      // these reads move.
      const target = into?.(length) ?? Buffer.allocUnsafe(length);
      const { bytesRead } = await this.#local.read(target, 0, length, offset ?? null);
      return target.subarray(0, bytesRead);
    }
    const json = offset === undefined ? { length } : { offset, length };
    return (await this.request("pread", json, into === undefined ? {} : { payloadInto: into })).payload;
  }

  /** Closes the handle; failures (a lost session, an unknown handle) are ignored, as Node ignores close errors. */
  async close(): Promise<void> {
    const local = this.#local;
    this.#local = undefined;
    // Ours first: the agent's descriptor must outlive every use of the reopened one.
    await local?.close().catch(() => {});
    try {
      await this.request("close");
    } catch {
      // Nothing to report: the handle is gone either way.
    }
  }
}
