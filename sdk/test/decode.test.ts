// The SDK's streaming UTF-8 decoder against Node's own TextDecoder on the whole input: only a byte-order mark at the
// very start is dropped, wherever the pieces are cut.
import { TextDecoder } from "node:util";
import { describe, expect, it } from "vitest";
import { StreamDecoder } from "../src/contract/decode.js";

const BOM = [0xef, 0xbb, 0xbf];

function decodePieces(pieces: number[][]): string {
  const decoder = new StreamDecoder();
  return pieces.map((piece) => decoder.decode(Uint8Array.from(piece))).join("") + decoder.decode();
}

describe("StreamDecoder", () => {
  it.each([
    ["a BOM alone at the start", [[...BOM, 0x61]]],
    ["two BOMs at the start: the second is text", [[...BOM, ...BOM, 0x63]]],
    ["a BOM split over the first pieces", [[0xef], [0xbb, 0xbf, 0x61]]],
    ["an empty first piece, then the BOM", [[], [...BOM, 0x61]]],
    [
      "a BOM at the start of a later piece is text",
      [
        [...BOM, 0x61],
        [...BOM, 0x62],
      ],
    ],
    ["a later piece after a first without BOM", [[0x61], [...BOM, 0x62]]],
    [
      "a BOM in the middle, split",
      [
        [0x61, 0xef, 0xbb],
        [0xbf, 0x62],
      ],
    ],
    ["an incomplete sequence at the end", [[...BOM, 0x61, 0xe2, 0x82]]],
  ])("%s", (_name, pieces) => {
    const whole = Uint8Array.from(pieces.flat());
    expect(decodePieces(pieces)).toBe(new TextDecoder().decode(whole));
  });
});
