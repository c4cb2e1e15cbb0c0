// Frame codec and stderr cleaning, the pure parts of Connection.
import { describe, expect, it } from "vitest";
import {
  CorruptFrameError,
  encodeFrame,
  FrameDecoder,
  FrameType,
  MAX_FRAME,
  stringifyWellFormed,
  TRANSIENT,
} from "../src/wire/frame.js";
import { cleanStderrTail, withStderrTail } from "../src/wire/stderr-tail.js";

function raw(type: number, id: number, jsonText: string, payload: Uint8Array = new Uint8Array(0), length?: number) {
  const json = Buffer.from(jsonText, "utf8");
  const head = Buffer.alloc(13);
  head.writeUInt32BE(length ?? 9 + json.length + payload.length, 0);
  head.writeUInt8(type, 4);
  head.writeUInt32BE(id, 5);
  head.writeUInt32BE(json.length, 9);
  return Buffer.concat([head, json, payload]);
}

describe("FrameDecoder", () => {
  it("decodes frames however the bytes are split", () => {
    const bytes = Buffer.concat([
      raw(FrameType.result, 1, '{"a":1}', new Uint8Array([1, 2, 3])),
      raw(FrameType.ping, 0, "{}"),
      raw(FrameType.event, 0xffffffff, '{"s":"é"}', new Uint8Array(300).fill(9)),
    ]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const step of [1, 7, bytes.length]) {
        const decoder = new FrameDecoder();
        const frames = [decoder.push(bytes.subarray(0, cut))];
        for (let at = cut; at < bytes.length; at += step) frames.push(decoder.push(bytes.subarray(at, at + step)));
        const all = frames.flat();
        expect(all.map((frame) => [frame.type, frame.id, frame.json, frame.payload.length])).toEqual([
          [2, 1, { a: 1 }, 3],
          [6, 0, {}, 0],
          [4, 0xffffffff, { s: "é" }, 300],
        ]);
      }
    }
  });

  it("gives each payload its own memory", () => {
    const bytes = raw(FrameType.result, 1, "{}", new Uint8Array([5, 6, 7]));
    const [frame] = new FrameDecoder().push(bytes);
    bytes.fill(0);
    expect([...frame.payload]).toEqual([5, 6, 7]);
    expect(frame.payload.buffer.byteLength).toBe(3);
    expect(Object.getPrototypeOf(frame.payload)).toBe(Uint8Array.prototype);
  });

  it("reads an empty JSON part as {}", () => {
    expect(new FrameDecoder().push(raw(FrameType.result, 3, ""))[0].json).toEqual({});
  });

  it("accepts a frame of exactly 16 MiB", () => {
    const payload = new Uint8Array(MAX_FRAME - 9 - 2);
    const [frame] = new FrameDecoder().push(raw(FrameType.result, 1, "{}", payload));
    expect(frame.payload.length).toBe(MAX_FRAME - 11);
  });

  it.each([
    ["a length below the header", raw(FrameType.result, 1, "", undefined, 8)],
    ["a length above 16 MiB", raw(FrameType.result, 1, "{}", undefined, MAX_FRAME + 1)],
    ["a JSON length overrunning the frame", raw(FrameType.result, 1, '{"a":1}', undefined, 10)],
    ["JSON that does not parse", raw(FrameType.result, 1, "{nope")],
    ["null JSON", raw(FrameType.result, 1, "null")],
    ["array JSON", raw(FrameType.result, 1, "[]")],
    ["number JSON", raw(FrameType.result, 1, "42")],
    ["string JSON", raw(FrameType.result, 1, '"x"')],
  ])("rejects %s", (_name, bytes) => {
    expect(() => new FrameDecoder().push(bytes)).toThrow(CorruptFrameError);
  });

  it("rejects a bad length as soon as the prefix arrives", () => {
    // Above the limit, and below the 9-byte header every frame has.
    for (const length of [MAX_FRAME + 1, 8, 0]) {
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32BE(length, 0);
      expect(() => new FrameDecoder().push(prefix), String(length)).toThrow(CorruptFrameError);
    }
  });
});

describe("FrameDecoder payload targets", () => {
  const frames = () =>
    Buffer.concat([
      raw(FrameType.event, 1, '{"n":1}', new Uint8Array(70_000).fill(1)),
      raw(FrameType.event, 1, '{"n":2}', new Uint8Array([2, 2, 2])),
      raw(FrameType.result, 2, "{}", new Uint8Array(5).fill(3)),
    ]);

  it("decodes results into the memory the target names", () => {
    const into = new Uint8Array(5);
    const decoder = new FrameDecoder((type) => (type === FrameType.result ? into : undefined));
    const decoded = decoder.push(frames());
    expect(decoded[2].payload).toBe(into);
    expect([...into]).toEqual([3, 3, 3, 3, 3]);
    // A target of the wrong length is not used.
    const short = new FrameDecoder(() => new Uint8Array(1)).push(frames());
    expect(short.map((frame) => frame.payload.length)).toEqual([70_000, 3, 5]);
  });

  it("hands transient payloads to each callback before decoding the next frame", () => {
    for (const step of [13, 1000, 65_536, 200_000]) {
      const bytes = frames();
      const decoder = new FrameDecoder(() => TRANSIENT);
      const seen: number[][] = [];
      for (let at = 0; at < bytes.length; at += step) {
        decoder.each(bytes.subarray(at, at + step), (frame) => {
          // Read now: the memory may be reused for the next frame.
          seen.push([frame.id, frame.payload.length, frame.payload[0], frame.payload[frame.payload.length - 1]]);
        });
      }
      expect(seen).toEqual([
        [1, 70_000, 1, 1],
        [1, 3, 2, 2],
        [2, 5, 3, 3],
      ]);
    }
  });

  it("never hands out transient memory from push, also after each", () => {
    const owned = (frame: { payload: Uint8Array }) => frame.payload.buffer.byteLength === frame.payload.byteLength;
    const decoder = new FrameDecoder(() => TRANSIENT);
    const decoded = decoder.push(frames());
    expect(decoded.map((frame) => [frame.payload.length, frame.payload[0]])).toEqual([
      [70_000, 1],
      [3, 2],
      [5, 3],
    ]);
    expect(decoded.map(owned)).toEqual([true, true, true]);
    // each() hands out views into the received chunk; a push() after it still gets memory of its own.
    const viewed: boolean[] = [];
    decoder.each(frames(), (frame) => viewed.push(owned(frame)));
    expect(viewed).toEqual([false, false, false]);
    expect(decoder.push(frames()).map(owned)).toEqual([true, true, true]);
  });
});

describe("encodeFrame", () => {
  it("encodes what the decoder reads back, payload not copied", () => {
    const payload = new Uint8Array([1, 2]);
    const pieces = encodeFrame(FrameType.request, 7, { op: "x", n: 1 }, payload);
    expect(pieces[1]).toBe(payload);
    const [frame] = new FrameDecoder().push(Buffer.concat(pieces));
    expect(frame).toEqual({ type: 1, id: 7, json: { op: "x", n: 1 }, payload: new Uint8Array([1, 2]) });
  });

  it("refuses a frame above 16 MiB, and encodes one of exactly 16 MiB", () => {
    expect(() => encodeFrame(FrameType.request, 1, {}, new Uint8Array(MAX_FRAME))).toThrow(RangeError);
    // The length counts the 9-byte header, the JSON ("{}") and the payload.
    const pieces = encodeFrame(FrameType.request, 1, {}, new Uint8Array(MAX_FRAME - 9 - 2));
    expect(Buffer.from(pieces[0]).readUInt32BE(0)).toBe(MAX_FRAME);
  });

  it("makes string values well-formed, leaving keys alone", () => {
    expect(stringifyWellFormed({ "k\ud800": ["a\udfff", { b: "\ud83d\ude00\ud83d" }], n: 1 })).toBe(
      JSON.stringify({ "k\ud800": ["a\ufffd", { b: "\ud83d\ude00\ufffd" }], n: 1 }),
    );
  });
});

describe("stderr tail", () => {
  it("cleans and bounds the text", () => {
    expect(cleanStderrTail("\u001b]0;title\u0007\u001b[2Kfirst  \r\n\r\n\u0085second\t\u0000\n")).toBe("first\nsecond");
    expect(cleanStderrTail(" \n\t\n\u001b[0m")).toBe("");
  });

  it("appends the tail only when there is one", () => {
    expect(withStderrTail("failed", "")).toBe("failed");
    expect(withStderrTail("failed", "why\n")).toBe("failed\nremote stderr:\nwhy");
  });
});
