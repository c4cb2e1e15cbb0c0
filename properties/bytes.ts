/**
 * Random byte strings biased towards what breaks UTF-8 decoders: valid characters of every length, BOMs at and
 * after the start, truncated sequences, overlong forms, surrogates, out-of-range leads, stray continuation bytes
 * and newlines right after an incomplete sequence.
 */
import fc from "fast-check";

/** Byte sequences a decoder must get exactly right (WHATWG: one U+FFFD per maximal subpart). */
const TRICKY: readonly (readonly number[])[] = [
  [0xef, 0xbb, 0xbf], // BOM
  [0xe2, 0x82], // truncated 3-byte
  [0xe2, 0x82, 0xac], // €
  [0xed, 0xa0, 0x80], // surrogate: 3 × U+FFFD
  [0xc0, 0xaf], // overlong: 2 × U+FFFD
  [0xf4, 0x90, 0x80, 0x80], // out of range: 4 × U+FFFD
  [0xf0, 0x9f, 0x98], // truncated 4-byte
  [0xf0, 0x9f, 0x98, 0x80], // 😀
  [0xc3, 0xa9], // é
  [0x80], // stray continuation
  [0xff],
  [0x0a],
  [0x0d, 0x0a],
  [0x00],
];

const encoder = new TextEncoder();

/** One token: tricky bytes, a random valid string, or random bytes. */
const token: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TRICKY).map((bytes) => Uint8Array.from(bytes)) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 4 }).map((text) => encoder.encode(text)) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 6 }).map((text) => encoder.encode(text)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 4 }) },
);

/** Concatenates byte arrays. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** Random tricky bytes made of up to `maxTokens` tokens. */
export function trickyBytes(maxTokens: number): fc.Arbitrary<Uint8Array> {
  return fc.array(token, { maxLength: maxTokens }).map(concat);
}

/** Bytes as a `printf` format that prints exactly them (every byte escaped, so `%` and `\` are harmless). */
export function printfEscapes(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += `\\${byte.toString(8).padStart(3, "0")}`;
  return out;
}
