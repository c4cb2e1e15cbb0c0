/**
 * UTF-8 decoding of the reference env, from `durable-env.md` §4.1–§4.2: Node's own WHATWG `TextDecoder` in
 * replacement mode does all the decoding; the only thing added is dropping a byte-order mark at the very start of
 * a stream (line readers and `exec` output drop it; `readTextFile` keeps it and does not come here).
 *
 * The decoder runs with `ignoreBOM: true` because Node's streaming BOM handling can drop a U+FEFF that follows a
 * chunk boundary. Instead the first bytes of the stream are examined: while they are a proper prefix of `EF BB BF`
 * they are held back (the decoder would hold such an incomplete sequence too, so no output is delayed), and once
 * they are known to be the mark they are removed before decoding.
 */
import { TextDecoder } from "node:util";

/** The UTF-8 encoding of U+FEFF. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/** A Node `TextDecoder` that decodes every U+FEFF as a character and replaces invalid bytes by U+FFFD. */
export function plainUtf8Decoder(): TextDecoder {
  return new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
}

/** How many leading bytes of `bytes` agree with the byte-order mark (0 to 3). */
function bomPrefixLength(bytes: Uint8Array): number {
  let matched = 0;
  while (matched < BOM.length && matched < bytes.length && bytes[matched] === BOM[matched]) matched++;
  return matched;
}

/** True when `bytes` begins with the whole byte-order mark. */
export function beginsWithBom(bytes: Uint8Array): boolean {
  return bomPrefixLength(bytes) === BOM.length;
}

/** Decodes one byte stream fed in pieces, equal to `new TextDecoder().decode(wholeStream)`. */
export class BomDroppingDecoder {
  readonly #decoder = plainUtf8Decoder();
  /** The stream's first bytes while they may still be the start of a mark; `undefined` once that is settled. */
  #head: Uint8Array | undefined = new Uint8Array(0);

  /** Decodes the next piece; bytes of an incomplete character wait for the next piece. */
  write(piece: Uint8Array): string {
    if (this.#head === undefined) return this.#decoder.decode(piece, { stream: true });
    const seen = new Uint8Array(this.#head.length + piece.length);
    seen.set(this.#head);
    seen.set(piece, this.#head.length);
    const matched = bomPrefixLength(seen);
    if (matched === seen.length && matched < BOM.length) {
      this.#head = seen;
      return "";
    }
    this.#head = undefined;
    return this.#decoder.decode(matched === BOM.length ? seen.subarray(BOM.length) : seen, { stream: true });
  }

  /** Ends the stream: bytes of an unfinished character become one U+FFFD. */
  end(): string {
    const head = this.#head;
    this.#head = undefined;
    if (head !== undefined && head.length > 0) return this.#decoder.decode(head);
    return this.#decoder.decode();
  }
}
