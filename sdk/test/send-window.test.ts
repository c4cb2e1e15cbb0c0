/** The write window's estimate of the bandwidth-delay product, from synthetic acknowledgement times. */
import { describe, expect, it } from "vitest";
import { SendWindow } from "../src/env/send-window.js";

const PIECE = 512 * 1024;

/**
 * Acknowledgements of a path with `rttMs` of round trip and `bytesPerMs` of rate, kept full: piece i leaves when
 * the serialiser is free and is answered a round trip after it is through.
 */
function feed(window: SendWindow, rttMs: number, bytesPerMs: number, count: number): void {
  const wire = PIECE / bytesPerMs;
  for (let i = 0; i < count; i++) {
    const sentAt = i * wire;
    window.acked(sentAt, sentAt + wire + rttMs);
  }
}

describe("SendWindow", () => {
  it("starts at its floor", () => {
    expect(new SendWindow(PIECE, 2, 32).pieces()).toBe(2);
  });

  it("keeps twice the bandwidth-delay product in flight, plus the piece being written", () => {
    // 100 Mbit/s = 12,500 bytes/ms, 50 ms: a BDP of 625,000 bytes; twice that is 2.38 pieces → 3, plus one.
    const wan = new SendWindow(PIECE, 2, 32);
    feed(wan, 50, 12_500, 10);
    expect(wan.estimate().rttMs).toBeCloseTo(50 + PIECE / 12_500, 6);
    expect(wan.estimate().bytesPerSecond).toBeCloseTo(12_500_000, 0);
    expect(wan.pieces()).toBe(4);
    // 20 Mbit/s, 150 ms: 375,000 bytes; twice is 1.43 pieces → 2, plus one.
    const far = new SendWindow(PIECE, 2, 32);
    feed(far, 150, 2_500, 10);
    expect(far.pieces()).toBe(3);
  });

  it("stays within its floor and ceiling", () => {
    const loopback = new SendWindow(PIECE, 8, 32);
    feed(loopback, 0.05, 2_000_000, 10);
    expect(loopback.pieces()).toBe(8);
    const huge = new SendWindow(PIECE, 2, 32);
    feed(huge, 300, 125_000, 10);
    expect(huge.pieces()).toBe(32);
  });
});
