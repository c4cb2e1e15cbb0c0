// ReadAhead: reads run ahead of a sequential consumer, and a read that leaves the plan says so to its issuer (which
// must then stop decoding into the consumer's buffer).
import { describe, expect, it } from "vitest";
import { chunksBetween, ReadAhead } from "../src/env/read-ahead.js";

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
