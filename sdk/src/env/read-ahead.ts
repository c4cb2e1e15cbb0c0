/**
 * Pipelined positional reads: while the caller consumes one read, the next planned reads are already on their way,
 * so a large read costs about one round trip per `depth` chunks instead of one per chunk. The caller still sees
 * the results one by one, in order, exactly as a sequential loop would.
 */
import { err, ok, type Result } from "../contract/result.js";
import { SendWindow } from "./send-window.js";

/** One planned positional read. */
export interface PlannedRead {
  offset: number;
  length: number;
}

/**
 * The outcome of a promise as a value, never a rejection: a request whose result nobody awaits any more (an
 * abandoned read, a write behind a failed one) then cannot become an unhandled rejection.
 */
export function settle<T>(promise: Promise<T>): Promise<Result<T, unknown>> {
  return promise.then(
    (value) => ok(value),
    (error: unknown) => err(error),
  );
}

interface InFlight extends PlannedRead {
  outcome: Promise<Result<Uint8Array, unknown>>;
  /** Set when the read no longer fits the plan; its bytes will not be used. */
  abandoned: boolean;
}

/**
 * Issues one read. `planned()` tells whether the read is still part of the plan (its bytes will be returned to the
 * consumer); a caller that decodes straight into its result buffer must stop doing so once it is not.
 */
export type PositionalRead = (offset: number, length: number, planned: () => boolean) => Promise<Uint8Array>;

/**
 * Runs positional reads ahead of a sequential consumer, at most `depth` at a time: a number, or a function asked
 * before each new read is issued (a window that grows with what the reads measure, env/send-window.ts).
 */
export class ReadAhead {
  readonly #read: PositionalRead;
  readonly #depth: () => number;
  #queue: InFlight[] = [];
  /** Abandoned reads still in flight; each leaves the set when it settles. */
  readonly #abandoned = new Set<Promise<Result<Uint8Array, unknown>>>();

  constructor(read: PositionalRead, depth: number | (() => number)) {
    this.#read = read;
    this.#depth = typeof depth === "number" ? () => depth : depth;
  }

  /**
   * Returns the bytes of the read `(offset, length)`, taking it from the reads in flight when one was planned
   * there; `upcoming` lists the reads the caller expects to ask for next (assuming this one comes back full), and
   * the first of them are issued now. Reads in flight that no longer fit the plan are abandoned.
   */
  async read(offset: number, length: number, upcoming: Iterable<PlannedRead>): Promise<Uint8Array> {
    let head = this.#queue.shift();
    if (head === undefined || head.offset !== offset || head.length !== length) {
      if (head !== undefined) this.#abandon(head);
      this.#abandonFrom(0);
      head = this.#issue({ offset, length });
    }
    this.#plan(upcoming);
    const outcome = await head.outcome;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Waits until no read is in flight any more; their outcomes are ignored. */
  async settle(): Promise<void> {
    const pending = [...this.#queue.map((entry) => entry.outcome), ...this.#abandoned];
    this.#queue = [];
    await Promise.all(pending);
  }

  /**
   * Keeps the queued reads that match the start of the plan and issues the missing ones, up to `depth - 1` ahead.
   * Reads already in flight that still match are kept even beyond a depth that has shrunk since they were issued.
   */
  #plan(upcoming: Iterable<PlannedRead>): void {
    const depth = Math.max(1, this.#depth());
    let index = 0;
    for (const planned of upcoming) {
      const queued = this.#queue[index];
      if (queued === undefined || queued.offset !== planned.offset || queued.length !== planned.length) {
        if (index >= depth - 1) break;
        this.#abandonFrom(index);
        this.#queue.push(this.#issue(planned));
      }
      index++;
    }
    this.#abandonFrom(index);
  }

  #abandonFrom(index: number): void {
    for (const entry of this.#queue.splice(index)) this.#abandon(entry);
  }

  #abandon(entry: InFlight): void {
    entry.abandoned = true;
    const outcome = entry.outcome;
    this.#abandoned.add(outcome);
    void outcome.then(() => this.#abandoned.delete(outcome));
  }

  #issue(planned: PlannedRead): InFlight {
    const entry: InFlight = { ...planned, outcome: Promise.resolve(ok(new Uint8Array(0))), abandoned: false };
    const start = () => this.#read(planned.offset, planned.length, () => !entry.abandoned);
    // A reader that lands bytes straight in the caller's memory as it reads (the same-host shortcut) cannot be
    // stopped once started: a read abandoned earlier may still be writing where this one will. So after an
    // abandonment new reads start only once every abandoned one has settled (rare: the plan changed, e.g. a
    // short read); otherwise nothing waits.
    const abandoned = [...this.#abandoned];
    entry.outcome = settle(abandoned.length === 0 ? start() : Promise.all(abandoned).then(start));
    return entry;
  }
}

/** Reads of `chunk` bytes from `start` up to `end` (the last one shorter). */
export function* chunksBetween(start: number, end: number, chunk: number): Generator<PlannedRead> {
  for (let offset = start; offset < end; offset += chunk) yield { offset, length: Math.min(chunk, end - offset) };
}

/** Reads of exactly `length` bytes at `start`, `start + length`, … while the offset is below `end`. */
export function* fixedReadsBefore(start: number, end: number, length: number): Generator<PlannedRead> {
  for (let offset = start; offset < end; offset += length) yield { offset, length };
}

/** A sized read ahead's floor: 8 reads in flight before anything is measured, as a write's window (file-io.ts). */
export const MIN_READ_PIECES = 8;
/**
 * Its ceiling, bounding the memory reads in flight pin: 32 × 512 KiB = 16 MiB for `readFile`, 8 MiB for a binary
 * reader's 256 KiB reads. The SSH channel's receive window is larger (ssh/receive-window.ts), so it never binds first.
 */
export const MAX_READ_PIECES = 32;

/**
 * A `ReadAhead` as deep as the path needs: its reads' answers are timed as a write's acknowledgements are and sized
 * by the same estimate of the bandwidth-delay product (`SendWindow`: twice the product plus one, from
 * {@link MIN_READ_PIECES} to {@link MAX_READ_PIECES} reads of `pieceBytes`). Reads have no side effect, so the depth
 * changes nothing a caller sees: it still takes the results one by one, checking its signal between them.
 */
export function sizedReadAhead(read: PositionalRead, pieceBytes: number): ReadAhead {
  const window = new SendWindow(pieceBytes, MIN_READ_PIECES, MAX_READ_PIECES);
  const timed: PositionalRead = async (offset, length, planned) => {
    const sentAt = performance.now();
    const bytes = await read(offset, length, planned);
    window.acked(sentAt);
    return bytes;
  };
  return new ReadAhead(timed, () => window.pieces());
}
