/**
 * How many pieces of a bulk write to keep in flight: enough to fill the path (its bandwidth-delay product), and no
 * more, since every byte still on the wire when an abort fires is written before the cancel that follows it
 * reaches the agent. Estimated from the write's own acknowledgements, BBR-style: the highest delivery rate seen
 * over a few pieces, times the lowest round trip seen minus one piece's time on the wire at that rate.
 */

/** Acknowledgements a delivery-rate sample spans; fewer make the rate jumpy when replies arrive in bursts. */
const RATE_SPAN = 4;

export class SendWindow {
  readonly #pieceBytes: number;
  readonly #minPieces: number;
  readonly #maxPieces: number;
  #minRttMs = Number.POSITIVE_INFINITY;
  /** Bytes per millisecond. */
  #maxRate = 0;
  #ackTimes: number[] = [];

  /**
   * @param pieceBytes the size of a piece
   * @param minPieces the window before anything is known, and its floor
   * @param maxPieces its ceiling (bounds the memory a piece in flight pins in transports' buffers)
   */
  constructor(pieceBytes: number, minPieces: number, maxPieces: number) {
    this.#pieceBytes = pieceBytes;
    this.#minPieces = minPieces;
    this.#maxPieces = maxPieces;
  }

  /** Records the acknowledgement, at `now`, of a piece sent at `sentAt` (both `performance.now()`). */
  acked(sentAt: number, now: number = performance.now()): void {
    this.#minRttMs = Math.min(this.#minRttMs, now - sentAt);
    this.#ackTimes.push(now);
    if (this.#ackTimes.length > RATE_SPAN + 1) this.#ackTimes.shift();
    if (this.#ackTimes.length === RATE_SPAN + 1) {
      const span = now - this.#ackTimes[0];
      if (span > 0) this.#maxRate = Math.max(this.#maxRate, (RATE_SPAN * this.#pieceBytes) / span);
    }
  }

  /** The pieces to keep in flight now: twice the bandwidth-delay product, plus the piece being written. */
  pieces(): number {
    if (this.#maxRate === 0 || !Number.isFinite(this.#minRttMs)) return this.#minPieces;
    // A piece's own time on the wire is in every round trip measured with it; the path's delay is the rest.
    const pathRttMs = Math.max(0, this.#minRttMs - this.#pieceBytes / this.#maxRate);
    const bdp = this.#maxRate * pathRttMs;
    const pieces = Math.ceil((2 * bdp) / this.#pieceBytes) + 1;
    return Math.min(this.#maxPieces, Math.max(this.#minPieces, pieces));
  }

  /** The estimate, for measurements. */
  estimate(): { rttMs: number; bytesPerSecond: number; pieces: number } {
    return { rttMs: this.#minRttMs, bytesPerSecond: this.#maxRate * 1000, pieces: this.pieces() };
  }
}
