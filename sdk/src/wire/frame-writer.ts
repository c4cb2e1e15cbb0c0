/** The agent's stdin as the connection writes it: frames in order, batched per turn of the event loop. */
import type { Writable } from "node:stream";

/** Pieces (headers and payloads) after which a burst of frames is written without waiting for the end of the turn. */
const BATCH_PIECES = 128;

/**
 * Writes frames to the agent's stdin in order, waiting for `drain` whenever the pipe is full. Frames written in one
 * turn of the event loop (a burst of concurrent requests, a header and its payload) leave together in one `writev`
 * at the end of the turn, so a thousand requests cost one system call and one wake-up of the agent, not a thousand.
 */
export class FrameWriter {
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
