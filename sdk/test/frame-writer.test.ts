// The writer of the agent's stdin: frames in order, one writev per turn of the event loop (a slice at once for a
// long burst), backpressure, the end, and a broken pipe that never throws.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { FrameWriter } from "../src/wire/frame-writer.js";

/** A stream that records each call it gets: a writev's pieces together, a single write alone. */
function recorder(options: { highWaterMark?: number } = {}) {
  const calls: string[][] = [];
  let release: (() => void) | undefined;
  const stream = new Writable({
    highWaterMark: options.highWaterMark ?? 1 << 20,
    writev(chunks, done) {
      calls.push(chunks.map(({ chunk }) => Buffer.from(chunk).toString()));
      done();
    },
    write(chunk, _encoding, done) {
      calls.push([Buffer.from(chunk).toString()]);
      // With a small highWaterMark the first write stays pending until released: the pipe is full.
      if (options.highWaterMark !== undefined && release === undefined) release = done;
      else done();
    },
  });
  return { stream, calls, release: () => release?.() };
}

const piece = (text: string) => Buffer.from(text);
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("FrameWriter", () => {
  it("hands the frames of one turn to the stream together, in order, at the end of the turn", async () => {
    const { stream, calls } = recorder();
    const writer = new FrameWriter(stream);
    writer.write([piece("h1"), piece("p1")]);
    writer.write([piece("h2")]);
    writer.write([piece("h3"), piece("p3")]);
    expect(calls).toEqual([]);
    await turn();
    expect(calls).toEqual([["h1", "p1", "h2", "h3", "p3"]]);
    writer.write([piece("h4")]);
    await turn();
    expect(calls).toEqual([["h1", "p1", "h2", "h3", "p3"], ["h4"]]);
  });

  it("writes a burst of 128 pieces at once, without waiting for the end of the turn", async () => {
    const { stream, calls } = recorder();
    const writer = new FrameWriter(stream);
    const burst = Array.from({ length: 127 }, (_, index) => piece(`p${index}`));
    writer.write(burst);
    expect(calls).toEqual([]);
    writer.write([piece("last")]);
    expect(calls.flat()).toEqual([...burst.map(String), "last"]);
    await turn();
    expect(calls.flat()).toHaveLength(128);
  });

  it("queues behind a full pipe and keeps the order when it drains", async () => {
    const { stream, calls, release } = recorder({ highWaterMark: 1 });
    const writer = new FrameWriter(stream);
    writer.write([piece("first")]);
    await turn();
    writer.write([piece("second"), piece("third")]);
    await turn();
    writer.write([piece("fourth")]);
    await turn();
    expect(calls).toEqual([["first"]]);
    release();
    await turn();
    expect(calls.flat()).toEqual(["first", "second", "third", "fourth"]);
  });

  it("sends what this turn wrote before ending the stream", async () => {
    const { stream, calls } = recorder();
    const writer = new FrameWriter(stream);
    writer.write([piece("cancel")]);
    writer.end();
    await turn();
    expect(calls.flat()).toEqual(["cancel"]);
    expect(stream.writableEnded).toBe(true);
    // Writes after the end go nowhere and do not throw.
    expect(() => writer.write([piece("late")])).not.toThrow();
    await turn();
    expect(calls.flat()).toEqual(["cancel"]);
  });

  it("never throws on a broken pipe", () => {
    const { stream } = recorder();
    new FrameWriter(stream);
    expect(() => stream.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }))).not.toThrow();
  });
});
