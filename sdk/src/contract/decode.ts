/**
 * UTF-8 decoding that equals `new TextDecoder().decode(allBytes)` however the bytes are split.
 *
 * Node's streaming `TextDecoder` with BOM handling can drop a U+FEFF that follows a chunk boundary, so BOM
 * handling stays off in the decoder and the leading mark is dropped here, once, at the start of the stream.
 */
import { TextDecoder } from "node:util";

/** A WHATWG UTF-8 decoder in replacement mode that keeps every U+FEFF. */
export function rangeDecoder(): TextDecoder {
  return new TextDecoder("utf-8", { ignoreBOM: true });
}

/** True when the bytes start with the UTF-8 byte-order mark `EF BB BF`. */
export function startsWithBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** Decodes a byte stream piece by piece; only a byte-order mark at the very start is dropped. */
export class StreamDecoder {
  readonly #decoder = rangeDecoder();
  #started = false;

  /** Decodes the next piece, or ends the stream (an incomplete sequence becomes one U+FFFD) when called without. */
  decode(bytes?: Uint8Array): string {
    const text = bytes === undefined ? this.#decoder.decode() : this.#decoder.decode(bytes, { stream: true });
    if (this.#started || text.length === 0) return text;
    this.#started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}
