/**
 * One start of the agent process: its pipes, its frame decoder and writer, the requests pending on it, and whether
 * it keeps the host process alive.
 */
import type { RemoteInfo } from "./agent-hello.js";
import type { AgentProcess } from "./connection-types.js";
import { encodeFrame, FrameDecoder, FrameType, type FrameTypeValue, TRANSIENT } from "./frame.js";
import { FrameWriter } from "./frame-writer.js";
import type { PendingRequest } from "./pending-request.js";
import { TextTail } from "./stderr-tail.js";

/** A handle that can keep the event loop alive or not (a child process, a pipe). */
interface Refable {
  ref(): void;
  unref(): void;
}

/** `value` as a {@link Refable}, if it is one. */
export function refable(value: unknown): Refable | undefined {
  const candidate = value as Partial<Refable> | null | undefined;
  return typeof candidate?.ref === "function" && typeof candidate.unref === "function"
    ? (candidate as Refable)
    : undefined;
}

/** One start of the agent process. */
export class AgentSession {
  readonly id: number;
  readonly child: AgentProcess;
  readonly marker: Buffer;
  readonly writer: FrameWriter;
  readonly pending = new Map<number, PendingRequest>();
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
  /** The agent's `/proc/<pid>/fd` when the same-host shortcut applies to this session (same-host.ts). */
  fdDir: string | undefined;
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
