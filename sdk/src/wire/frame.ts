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
const EMPTY_BUFFER = Buffer.alloc(0);

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

/**
 * Where `JSON.stringify` escaped a lone surrogate (`\ud800`…`\udfff`). A literal backslash before "ud8…" in a
 * string also matches; that only costs the slow path, whose output is right either way.
 */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

/** Serializes JSON with every string value made well-formed (keys are left alone; callers fix keys they build). */
export function stringifyWellFormed(json: Record<string, unknown>): string {
  // A replacer takes JSON.stringify off its fast path; it is needed only when some string has a lone surrogate,
  // which the plain output always shows as an escape.
  const text = JSON.stringify(json);
  return ESCAPED_SURROGATE.test(text) ? JSON.stringify(json, wellFormedValues) : text;
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
 * Chooses where a frame's payload goes: a `Uint8Array` of exactly `length` bytes that the payload is copied into
 * (the frame's `payload` is then that array), {@link TRANSIENT} for memory that stays valid only until the frame's
 * callback returns (see {@link FrameDecoder.each}), or `undefined` for a fresh array.
 */
export type PayloadTarget = (type: number, id: number, length: number) => Uint8Array | typeof TRANSIENT | undefined;

/** A {@link PayloadTarget} answer: the payload is only looked at during the callback, so no memory of its own. */
export const TRANSIENT = Symbol("transient payload");

/** Transient payloads up to this size are assembled in one reused buffer; larger ones get memory of their own. */
const SCRATCH_LIMIT = 1024 * 1024;

/**
 * A fresh array of `length` bytes that owns its memory. Not zero-filled: every byte is overwritten by the copy
 * that follows, and large payloads would otherwise be written twice.
 */
function ownedBytes(length: number): Uint8Array {
  const bytes = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, length);
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
  readonly #target: PayloadTarget | undefined;
  /** Reused memory for transient payloads that span received chunks. */
  #scratch: Uint8Array | undefined;
  /** Whether transient payloads may be handed out (only by {@link each}, whose callback sees each frame at once). */
  #transient = false;

  /** `target`, when given, may name the memory a payload is decoded into (saving a copy for large reads). */
  constructor(target?: PayloadTarget) {
    this.#target = target;
  }

  /** Adds received bytes and returns every frame they complete. Throws {@link CorruptFrameError}. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    this.#add(chunk);
    for (;;) {
      const frame = this.#next();
      if (frame === undefined) return frames;
      frames.push(frame);
    }
  }

  /**
   * Adds received bytes and calls `onFrame` with every frame they complete, one by one, before decoding the next:
   * a payload the target called {@link TRANSIENT} is valid only until that call returns. Throws
   * {@link CorruptFrameError} (frames before the corrupt one have been delivered).
   */
  each(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    this.#add(chunk);
    for (;;) {
      this.#transient = true;
      let frame: Frame | undefined;
      try {
        frame = this.#next();
      } finally {
        this.#transient = false;
      }
      if (frame === undefined) return;
      onFrame(frame);
    }
  }

  #add(chunk: Buffer): void {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#available += chunk.length;
    }
  }

  #next(): Frame | undefined {
    if (this.#available < PREFIX_SIZE) return undefined;
    const first = this.#chunks[0];
    const head = this.#head;
    // The whole header is nearly always inside the first chunk; read it in place.
    const inFirst = head + PREFIX_SIZE + HEADER_SIZE <= first.length;
    const length = inFirst ? first.readUInt32BE(head) : this.#peekUInt32(0);
    if (length < HEADER_SIZE || length > MAX_FRAME) throw new CorruptFrameError(`Invalid frame length ${length}`);
    if (this.#available < PREFIX_SIZE + HEADER_SIZE) return undefined;
    const jsonLength = inFirst ? first.readUInt32BE(head + PREFIX_SIZE + 5) : this.#peekUInt32(PREFIX_SIZE + 5);
    if (HEADER_SIZE + jsonLength > length) throw new CorruptFrameError(`JSON length ${jsonLength} overruns the frame`);
    if (this.#available < PREFIX_SIZE + length) return undefined;

    const type = inFirst ? first[head + PREFIX_SIZE] : this.#peek(PREFIX_SIZE, 1)[0];
    const id = inFirst ? first.readUInt32BE(head + PREFIX_SIZE + 1) : this.#peekUInt32(PREFIX_SIZE + 1);
    this.#skip(PREFIX_SIZE + HEADER_SIZE);
    const json = parseObject(this.#take(jsonLength));
    const payloadLength = length - HEADER_SIZE - jsonLength;
    let payload: Uint8Array;
    if (payloadLength === 0) {
      payload = new Uint8Array(0);
    } else {
      const target = this.#target?.(type, id, payloadLength);
      if (target === TRANSIENT) payload = this.#transientPayload(payloadLength);
      else payload = this.#copyInto(target?.length === payloadLength ? target : ownedBytes(payloadLength));
    }
    return { type, id, json, payload };
  }

  /** A payload valid until the frame's callback returns: a view into a received chunk, or the reused scratch. */
  #transientPayload(length: number): Uint8Array {
    const first = this.#chunks[0];
    if (this.#transient && this.#head + length <= first.length) {
      const view = first.subarray(this.#head, this.#head + length);
      this.#advance(length);
      return view;
    }
    if (!this.#transient || length > SCRATCH_LIMIT) return this.#copyInto(ownedBytes(length));
    if (this.#scratch === undefined || this.#scratch.length < length) {
      this.#scratch = new Uint8Array(Math.max(length, 64 * 1024));
    }
    return this.#copyInto(this.#scratch.subarray(0, length));
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

  /** Consumes `length` bytes; may return a view into a received chunk (used for JSON only). */
  #take(length: number): Buffer {
    if (length === 0) return EMPTY_BUFFER;
    const first = this.#chunks[0];
    if (this.#head + length <= first.length) {
      const view = first.subarray(this.#head, this.#head + length);
      this.#advance(length);
      return view;
    }
    const out = Buffer.allocUnsafe(length);
    this.#copyInto(out);
    return out;
  }

  /** Consumes `length` bytes without looking at them. */
  #skip(length: number): void {
    let left = length;
    while (left > 0) {
      const count = Math.min(this.#chunks[0].length - this.#head, left);
      this.#advance(count);
      left -= count;
    }
  }

  /** Consumes `out.length` bytes into `out`. */
  #copyInto(out: Uint8Array): Uint8Array {
    const length = out.length;
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
