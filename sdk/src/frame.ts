/**
 * Protocol 1 framing, client side: `u32 length | u8 type | u32 id | u32 jsonLength | JSON object | payload`,
 * big-endian, where `length` counts every byte after itself and is at most 16 MiB.
 */
import { isWireObject } from "./wire.js";

/** Frame type byte. */
export const FrameType = {
  request: 1,
  result: 2,
  error: 3,
  event: 4,
  cancel: 5,
  ping: 6,
} as const;

/** One of the protocol 1 frame types. */
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

/** Bytes of the length prefix. */
export const PREFIX_SIZE = 4;
/** type + id + jsonLength: the part of `length` that is neither JSON nor payload. */
export const HEADER_SIZE = 9;
/** Upper bound of `length` (16 MiB). */
export const MAX_FRAME = 16 * 1024 * 1024;

/** A decoded frame: the JSON object and a payload that owns its bytes (never a view into the receive buffer). */
export interface Frame {
  type: number;
  id: number;
  json: Record<string, unknown>;
  payload: Uint8Array;
}

/** Thrown by {@link FrameDecoder.push} when the peer sent bytes that cannot be a protocol 1 frame. */
export class CorruptFrameError extends Error {
  override readonly name = "CorruptFrameError";
}

const EMPTY = new Uint8Array(0);

interface WellFormedString {
  toWellFormed(): string;
}

/** Replaces lone surrogates with U+FFFD, the way Node encodes strings for system calls. */
export function wellFormed(text: string): string {
  return (text as unknown as WellFormedString).toWellFormed();
}

function wellFormedValues(_key: string, value: unknown): unknown {
  return typeof value === "string" ? wellFormed(value) : value;
}

/** Serializes JSON with every string value made well-formed (keys are left alone; callers fix keys they build). */
export function stringifyWellFormed(json: Record<string, unknown>): string {
  return JSON.stringify(json, wellFormedValues);
}

/**
 * Encodes a frame as two pieces: header + JSON, and the payload as given (not copied), so a large payload costs no
 * extra copy. Throws a `RangeError` if the frame would exceed {@link MAX_FRAME}.
 */
export function encodeFrame(
  type: FrameTypeValue,
  id: number,
  json: Record<string, unknown>,
  payload: Uint8Array = EMPTY,
): Uint8Array[] {
  const text = stringifyWellFormed(json);
  const jsonLength = Buffer.byteLength(text, "utf8");
  const length = HEADER_SIZE + jsonLength + payload.length;
  if (length > MAX_FRAME) throw new RangeError(`Frame of ${length} bytes exceeds the ${MAX_FRAME}-byte limit`);
  const head = Buffer.allocUnsafe(PREFIX_SIZE + HEADER_SIZE + jsonLength);
  head.writeUInt32BE(length, 0);
  head.writeUInt8(type, 4);
  head.writeUInt32BE(id >>> 0, 5);
  head.writeUInt32BE(jsonLength, 9);
  head.write(text, PREFIX_SIZE + HEADER_SIZE, "utf8");
  return payload.length === 0 ? [head] : [head, payload];
}

/**
 * Incremental frame decoder. Received chunks are queued without copying; a frame is copied out once, when all of
 * its bytes have arrived, so a 16 MiB frame arriving in 64 KiB pieces costs one copy, not a quadratic re-concat.
 */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  /** Offset of the first unread byte in `#chunks[0]`. */
  #head = 0;
  #available = 0;

  /** Adds received bytes and returns every frame they complete. Throws {@link CorruptFrameError}. */
  push(chunk: Buffer): Frame[] {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#available += chunk.length;
    }
    const frames: Frame[] = [];
    for (;;) {
      const frame = this.#next();
      if (frame === undefined) return frames;
      frames.push(frame);
    }
  }

  #next(): Frame | undefined {
    if (this.#available < PREFIX_SIZE) return undefined;
    const length = this.#peekUInt32(0);
    if (length < HEADER_SIZE || length > MAX_FRAME) throw new CorruptFrameError(`Invalid frame length ${length}`);
    if (this.#available < PREFIX_SIZE + HEADER_SIZE) return undefined;
    const jsonLength = this.#peekUInt32(PREFIX_SIZE + 5);
    if (HEADER_SIZE + jsonLength > length) throw new CorruptFrameError(`JSON length ${jsonLength} overruns the frame`);
    if (this.#available < PREFIX_SIZE + length) return undefined;

    const header = this.#take(PREFIX_SIZE + HEADER_SIZE);
    const type = header[4];
    const id = header.readUInt32BE(5);
    const jsonBytes = this.#take(jsonLength);
    const payloadLength = length - HEADER_SIZE - jsonLength;
    const payload = payloadLength === 0 ? new Uint8Array(0) : this.#copy(payloadLength);
    return { type, id, json: parseObject(jsonBytes), payload };
  }

  #peekUInt32(offset: number): number {
    const bytes = this.#peek(offset, 4);
    return bytes.readUInt32BE(0);
  }

  /** Returns `length` bytes starting `offset` bytes ahead, without consuming them. */
  #peek(offset: number, length: number): Buffer {
    const first = this.#chunks[0];
    const start = this.#head + offset;
    if (start + length <= first.length) return first.subarray(start, start + length);
    const out = Buffer.allocUnsafe(length);
    let skip = start;
    let written = 0;
    for (const chunk of this.#chunks) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      const part = chunk.subarray(skip, Math.min(chunk.length, skip + length - written));
      out.set(part, written);
      written += part.length;
      skip = 0;
      if (written === length) break;
    }
    return out;
  }

  /** Consumes `length` bytes; may return a view into a received chunk (used for header and JSON only). */
  #take(length: number): Buffer {
    const first = this.#chunks[0];
    if (length === 0) return Buffer.alloc(0);
    if (this.#head + length <= first.length) {
      const view = first.subarray(this.#head, this.#head + length);
      this.#advance(length);
      return view;
    }
    const out = Buffer.from(this.#copy(length).buffer);
    return out;
  }

  /** Consumes `length` bytes into a fresh `Uint8Array` that owns its memory. */
  #copy(length: number): Uint8Array {
    const out = new Uint8Array(length);
    let written = 0;
    while (written < length) {
      const first = this.#chunks[0];
      const count = Math.min(first.length - this.#head, length - written);
      out.set(first.subarray(this.#head, this.#head + count), written);
      written += count;
      this.#advance(count);
    }
    return out;
  }

  #advance(count: number): void {
    this.#head += count;
    this.#available -= count;
    if (this.#head === this.#chunks[0].length) {
      this.#chunks.shift();
      this.#head = 0;
    }
  }
}

function parseObject(bytes: Buffer): Record<string, unknown> {
  // An empty JSON part means `{}` (the agent reads it the same way).
  if (bytes.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new CorruptFrameError("Frame JSON does not parse");
  }
  if (!isWireObject(value)) throw new CorruptFrameError("Frame JSON is not an object");
  return value;
}
