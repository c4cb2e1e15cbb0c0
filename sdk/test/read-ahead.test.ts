// ReadAhead: reads run ahead of a sequential consumer, and a read that leaves the plan says so to its issuer (which
// must then stop decoding into the consumer's buffer).
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  chunksBetween,
  MAX_READ_PIECES,
  MIN_READ_PIECES,
  type PositionalRead,
  ReadAhead,
  sizedReadAhead,
} from "../src/env/read-ahead.js";

interface Issued {
  offset: number;
  length: number;
  planned: () => boolean;
  finish: (bytes: Uint8Array) => void;
}

function recordingReader(): { issued: Issued[]; read: ConstructorParameters<typeof ReadAhead>[0] } {
  const issued: Issued[] = [];
  return {
    issued,
    read: (offset, length, planned) =>
      new Promise<Uint8Array>((resolve) => issued.push({ offset, length, planned, finish: resolve })),
  };
}

describe("ReadAhead", () => {
  it("issues the planned reads at once and hands them out in order", async () => {
    const { issued, read } = recordingReader();
    const ahead = new ReadAhead(read, 3);
    const first = ahead.read(0, 10, chunksBetween(10, 40, 10));
    expect(issued.map((entry) => entry.offset)).toEqual([0, 10, 20]);
    expect(issued.every((entry) => entry.planned())).toBe(true);
    for (const entry of issued) entry.finish(new Uint8Array(entry.length).fill(entry.offset));
    expect((await first)[0]).toBe(0);
    const second = await ahead.read(10, 10, chunksBetween(20, 40, 10));
    expect(second[0]).toBe(10);
    expect(issued.map((entry) => entry.offset)).toEqual([0, 10, 20, 30]);
    issued[3].finish(new Uint8Array(10));
    await ahead.settle();
  });

  it("marks reads that no longer fit the plan as abandoned", async () => {
    const { issued, read } = recordingReader();
    const ahead = new ReadAhead(read, 3);
    const first = ahead.read(0, 10, chunksBetween(10, 40, 10));
    issued[0].finish(new Uint8Array(4));
    // A short read: the consumer continues at 4, so the reads planned at 10 and 20 are abandoned.
    expect((await first).length).toBe(4);
    const next = ahead.read(4, 10, chunksBetween(14, 40, 10));
    expect(issued[1].planned()).toBe(false);
    expect(issued[2].planned()).toBe(false);
    // The new reads cover memory the abandoned ones may still be writing (a reader that lands bytes straight in
    // the consumer's buffer cannot be stopped): they start only once both abandoned reads have settled.
    await new Promise((resolve) => setImmediate(resolve));
    expect(issued).toHaveLength(3);
    issued[1].finish(new Uint8Array(10));
    await new Promise((resolve) => setImmediate(resolve));
    expect(issued).toHaveLength(3);
    issued[2].finish(new Uint8Array(10));
    await new Promise((resolve) => setImmediate(resolve));
    const replanned = issued.slice(3);
    expect(replanned.map((entry) => [entry.offset, entry.planned()])).toEqual([
      [4, true],
      [14, true],
      [24, true],
    ]);
    for (const entry of replanned) entry.finish(new Uint8Array(entry.length));
    expect((await next).length).toBe(10);
    // Once the abandoned reads settled, later reads start at once again.
    const after = ahead.read(14, 10, chunksBetween(24, 40, 10));
    expect(issued.length).toBeGreaterThan(6);
    for (const entry of issued.slice(6)) entry.finish(new Uint8Array(entry.length));
    expect((await after).length).toBe(10);
    await ahead.settle();
  });
});

const PIECE = 512 * 1024;

/**
 * Reads `pieces` × 512 KiB through `sizedReadAhead` over a simulated path, on a fake clock: a request takes half
 * the round trip to the server, its answer waits for the link to be free, takes `msPerPiece` on it and half the
 * round trip back. Returns the file's bytes in the order consumed and the most reads that were ever in flight.
 */
async function overPath(
  rttMs: number,
  msPerPiece: number,
  pieces: number,
): Promise<{ maxInFlight: number; offsets: number[] }> {
  vi.useFakeTimers({ toFake: ["performance", "setTimeout"] });
  let inFlight = 0;
  let maxInFlight = 0;
  let linkFree = 0;
  const read: PositionalRead = (offset, length) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const now = performance.now();
    const start = Math.max(now + rttMs / 2, linkFree);
    linkFree = start + (msPerPiece * length) / PIECE;
    return new Promise((resolve) =>
      setTimeout(
        () => {
          inFlight--;
          resolve(new Uint8Array(length).fill(offset / PIECE));
        },
        linkFree + rttMs / 2 - now,
      ),
    );
  };
  const ahead = sizedReadAhead(read, PIECE);
  const size = pieces * PIECE;
  const offsets: number[] = [];
  const consumer = (async () => {
    for (let at = 0; at < size; at += PIECE) {
      const bytes = await ahead.read(at, PIECE, chunksBetween(at + PIECE, size, PIECE));
      offsets.push(bytes[0] * PIECE);
    }
  })();
  await vi.runAllTimersAsync();
  await consumer;
  return { maxInFlight, offsets };
}

describe("sizedReadAhead", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps twice the bandwidth-delay product in flight, plus one, once its reads have measured the path", async () => {
    // 10 ms a piece (~420 Mbit/s) and 98 ms: a product of 9.8 pieces' worth of time at that rate, i.e. 4.9 MiB;
    // twice that is 19.6 pieces → 20, plus one.
    const { maxInFlight, offsets } = await overPath(98, 10, 200);
    expect(maxInFlight).toBe(21);
    // The depth changes nothing the consumer sees: every piece, in order.
    expect(offsets).toEqual(Array.from({ length: 200 }, (_, i) => i * PIECE));
  });

  it("stays at its floor when the product is small and at its ceiling when it is large", async () => {
    // 40 ms a piece (~105 Mbit/s), 50 ms: 2.5 pieces → 3 + 1 = 4, below the floor.
    expect((await overPath(50, 40, 100)).maxInFlight).toBe(MIN_READ_PIECES);
    vi.useRealTimers();
    // 4 ms a piece (~1 Gbit/s), 300 ms: 150 pieces, above the ceiling (16 MiB in flight).
    expect((await overPath(300, 4, 200)).maxInFlight).toBe(MAX_READ_PIECES);
  });
});
