/**
 * The SDK's `StreamDecoder` on its own, and the reference env's `BomDroppingDecoder`, against Node's
 * `TextDecoder`: random bytes biased towards what breaks UTF-8 decoders (BOMs at and after the start, truncated and
 * invalid sequences), split at random points — empty pieces included — and fed piece by piece, then ended. The
 * text must equal `new TextDecoder().decode(allBytes)`: a BOM dropped only at the very start, every later U+FEFF
 * kept, one U+FFFD per maximal invalid subpart, a character split across pieces decoded whole.
 */
import { StreamDecoder } from "@outpost/sdk/protocol";
import fc from "fast-check";
import { expect } from "vitest";
import { BomDroppingDecoder } from "../spec/src/reference/decode.js";
import { concat, trickyBytes } from "./bytes.js";
import { propertyTest } from "./harness.js";

const BASE_RUNS = 2000;
const BASE_TIME_MS = 5_000;

/** Starts of a stream that are, or could grow into, a byte-order mark: where BOM handling goes wrong. */
const bomStart = fc.constantFrom([], [0xef], [0xef, 0xbb], [0xef, 0xbb, 0xbf], [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf]);

/** Bytes and the pieces they are cut into (positions sorted, duplicates give empty pieces). */
const splitBytes = fc
  .tuple(bomStart, trickyBytes(12), fc.array(fc.nat(), { maxLength: 8 }))
  .map(([start, rest, cuts]) => {
    const bytes = concat([Uint8Array.from(start), rest]);
    const points = cuts.map((cut) => cut % (bytes.length + 1)).sort((a, b) => a - b);
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (const point of [...points, bytes.length]) {
      pieces.push(bytes.subarray(from, point));
      from = point;
    }
    return { bytes, pieces };
  });

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex").replace(/(..)/g, "$1 ").trim();
}

function describeSplit([split]: [{ bytes: Uint8Array; pieces: Uint8Array[] }]): string {
  return split.pieces.map((piece) => `[${hex(piece)}]`).join(" | ");
}

/** Escapes the text so U+FEFF and U+FFFD are visible in a failure. */
function visible(text: string): string {
  return JSON.stringify(text).replace(/[\ufeff\ufffd]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
}

/** A streaming decoder under test, as two functions: decode the next piece, and end the stream. */
interface Streaming {
  write(piece: Uint8Array): string;
  end(): string;
}

/** Registers the property that `make()`'s decoder, fed the pieces in order and ended, equals one-shot decoding. */
function equalsTextDecoder(name: string, make: () => Streaming): void {
  propertyTest(
    `${name} equals TextDecoder on the whole stream, however the bytes are split`,
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
    () =>
      fc.asyncProperty(splitBytes, async ({ bytes, pieces }) => {
        const decoder = make();
        const text = pieces.map((piece) => decoder.write(piece)).join("") + decoder.end();
        expect(visible(text)).toBe(visible(new TextDecoder().decode(bytes)));
      }),
    { describe: describeSplit },
  );
}

equalsTextDecoder("the SDK's StreamDecoder", () => {
  const decoder = new StreamDecoder();
  return { write: (piece) => decoder.decode(piece), end: () => decoder.decode() };
});

equalsTextDecoder("the reference's BomDroppingDecoder", () => new BomDroppingDecoder());
