/**
 * The spill of `exec`: once the raw output crosses `afterBytes` or `afterLines`, the complete raw output (from
 * the first byte, both streams in arrival order) goes to `pi-output-<uuid>.log` in a fresh temp directory.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { ExecutionError, type FileError } from "./errors.js";
import { type Result, toError } from "./result.js";
import type { ShellSpillOptions } from "./types.js";

/** Buffer size of the spill write stream before it reports backpressure. */
export const SPILL_HIGH_WATER_MARK = 1024 * 1024;

const NEWLINE = 0x0a;

/** What the spill needs from the running command. */
export interface SpillHooks {
  /** Stops reading both pipes. */
  pause(): void;
  /** Reads both pipes again. */
  resume(): void;
  /** True while something other than the spill wants the pipes to stay paused (callback error, timeout, abort). */
  holdPaused(): boolean;
  /** Kills the command's process tree. */
  kill(): void;
  /** Creates the spill file (Durable: `this.createTempFile({prefix: "pi-output-", suffix: ".log"}, context)`). */
  createFile(): Promise<Result<string, FileError>>;
}

function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) count++;
  return count;
}

/** Spill state of one command. */
export class Spill {
  readonly #thresholds: ShellSpillOptions;
  readonly #hooks: SpillHooks;
  #prefix: Uint8Array[] = [];
  #seenBytes = 0;
  #seenNewlines = 0;
  #started = false;
  /** Chunks waiting for the file to be created. */
  #queue: Uint8Array[] = [];
  #stream: WriteStream | undefined;
  #creation: Promise<void> | undefined;
  #backpressured = false;
  /** The spill file, once created. */
  path: string | undefined;
  /** Why the spill failed; set once. */
  error: ExecutionError | undefined;

  constructor(thresholds: ShellSpillOptions, hooks: SpillHooks) {
    this.#thresholds = thresholds;
    this.#hooks = hooks;
  }

  /** True while exec must keep waiting for the spill: its file is still being created, or it is backpressured. */
  get draining(): boolean {
    return this.error === undefined && this.#started && (this.#stream === undefined || this.#backpressured);
  }

  /** Takes the next raw chunk of either stream. */
  accept(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.#started) {
      this.#write(chunk);
      return;
    }
    this.#seenBytes += chunk.length;
    this.#seenNewlines += countNewlines(chunk);
    // A chunk that does not end with a newline ends with a partial line, which counts as a line.
    const lines = this.#seenNewlines + (chunk[chunk.length - 1] === NEWLINE ? 0 : 1);
    if (this.#seenBytes <= this.#thresholds.afterBytes && lines <= this.#thresholds.afterLines) {
      this.#prefix.push(chunk);
      return;
    }
    const queued = [...this.#prefix, chunk];
    this.#prefix = [];
    this.#start(queued);
  }

  /** Waits until the file is complete (creation done, stream ended and flushed). */
  async finish(): Promise<void> {
    if (!this.#started) return;
    await this.#creation;
    const stream = this.#stream;
    if (stream === undefined || stream.destroyed) return;
    await new Promise<void>((resolve) => {
      stream.once("finish", resolve);
      stream.once("error", () => resolve());
      stream.once("close", resolve);
      stream.end();
    });
  }

  #start(queued: Uint8Array[]): void {
    this.#started = true;
    this.#queue = queued;
    this.#hooks.pause();
    this.#creation = this.#open();
  }

  async #open(): Promise<void> {
    const created = await this.#hooks.createFile();
    if (!created.ok) {
      this.#fail(created.error);
      return;
    }
    this.path = created.value;
    const stream = createWriteStream(created.value, { flags: "a", highWaterMark: SPILL_HIGH_WATER_MARK });
    stream.on("error", (error) => this.#fail(error));
    stream.on("drain", () => {
      this.#backpressured = false;
      if (!this.#blocked()) this.#hooks.resume();
    });
    this.#stream = stream;
    const queued = this.#queue;
    this.#queue = [];
    for (const chunk of queued) {
      if (!stream.write(chunk)) this.#backpressured = true;
    }
    if (!this.#blocked()) this.#hooks.resume();
  }

  #write(chunk: Uint8Array): void {
    if (this.error !== undefined) return;
    const stream = this.#stream;
    if (stream === undefined) {
      this.#queue.push(chunk);
      return;
    }
    if (!stream.write(chunk)) {
      this.#backpressured = true;
      this.#hooks.pause();
    }
  }

  #blocked(): boolean {
    return this.error !== undefined || this.#backpressured || this.#hooks.holdPaused();
  }

  #fail(thrown: unknown): void {
    if (this.error !== undefined) return;
    const cause = toError(thrown);
    this.error = new ExecutionError("unknown", `Failed to preserve complete shell output: ${cause.message}`, cause);
    this.#backpressured = false;
    this.#hooks.kill();
  }
}
