import type { LineScan } from "@outpost/sdk";
import { LineScanner } from "@outpost/spec/reference";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** BOM, an invalid sequence cut by a newline, an empty line, a later U+FEFF, no final newline. */
const VECTOR = Uint8Array.from([
  0xef, 0xbb, 0xbf, 0x61, 0x0a, 0xe2, 0x82, 0x0a, 0x0a, 0xef, 0xbb, 0xbf, 0x62, 0x0a, 0xc3, 0xa9,
]);

function scan(bytes: Uint8Array, startLine: number, endLine: number | undefined, chunkSize: number): LineScan {
  const scanner = new LineScanner(startLine, endLine);
  for (let at = 0; at < bytes.length; at += chunkSize) scanner.push(bytes.subarray(at, at + chunkSize));
  return scanner.finish();
}

/**
 * What a scan must report, computed the slow way: line boundaries from the newline bytes, sizes from one
 * whole-file `TextDecoder` decode (which drops a leading BOM).
 */
function expectedScan(bytes: Uint8Array, startLine: number, endLine = Number.POSITIVE_INFINITY): LineScan {
  const newlineAt: number[] = [];
  bytes.forEach((byte, index) => {
    if (byte === 0x0a) newlineAt.push(index);
  });
  const newlines = newlineAt.length;
  const size = bytes.length;
  if (startLine > newlines) {
    return {
      newlines,
      start: size,
      end: size,
      firstLineEnd: size,
      lastLineStart: size,
      selectedBytes: 0,
      firstLineBytes: 0,
    };
  }
  const lineStart = (line: number) => (line === 0 ? 0 : newlineAt[line - 1] + 1);
  const lineEnd = (line: number) => (line < newlines ? newlineAt[line] : size);
  const lastLine = Math.min(endLine - 1, newlines);
  const lines = new TextDecoder().decode(bytes).split("\n");
  expect(lines.length).toBe(newlines + 1);
  return {
    newlines,
    start: lineStart(startLine),
    end: lineEnd(lastLine),
    firstLineEnd: lineEnd(startLine),
    lastLineStart: lineStart(lastLine),
    selectedBytes: Buffer.byteLength(lines.slice(startLine, lastLine + 1).join("\n")),
    firstLineBytes: Buffer.byteLength(lines[startLine]),
  };
}

describe("LineScanner", () => {
  const cases: { range: [number, number | undefined]; scan: LineScan }[] = [
    {
      range: [0, undefined],
      scan: {
        newlines: 4,
        start: 0,
        end: 16,
        firstLineEnd: 4,
        lastLineStart: 14,
        selectedBytes: 14,
        firstLineBytes: 1,
      },
    },
    {
      range: [0, 1],
      scan: { newlines: 4, start: 0, end: 4, firstLineEnd: 4, lastLineStart: 0, selectedBytes: 1, firstLineBytes: 1 },
    },
    {
      range: [1, 3],
      scan: { newlines: 4, start: 5, end: 8, firstLineEnd: 7, lastLineStart: 8, selectedBytes: 4, firstLineBytes: 3 },
    },
    {
      range: [2, 3],
      scan: { newlines: 4, start: 8, end: 8, firstLineEnd: 8, lastLineStart: 8, selectedBytes: 0, firstLineBytes: 0 },
    },
    {
      range: [3, undefined],
      scan: {
        newlines: 4,
        start: 9,
        end: 16,
        firstLineEnd: 13,
        lastLineStart: 14,
        selectedBytes: 7,
        firstLineBytes: 4,
      },
    },
    {
      range: [4, 9],
      scan: {
        newlines: 4,
        start: 14,
        end: 16,
        firstLineEnd: 16,
        lastLineStart: 14,
        selectedBytes: 2,
        firstLineBytes: 2,
      },
    },
    {
      range: [9, undefined],
      scan: {
        newlines: 4,
        start: 16,
        end: 16,
        firstLineEnd: 16,
        lastLineStart: 16,
        selectedBytes: 0,
        firstLineBytes: 0,
      },
    },
  ];

  for (const { range, scan: expected } of cases) {
    it(`scans the 16-byte vector for [${range[0]}, ${range[1] ?? "∞"}) in chunks of 1..5`, () => {
      for (let chunkSize = 1; chunkSize <= 5; chunkSize++) {
        expect(scan(VECTOR, range[0], range[1], chunkSize)).toEqual(expected);
      }
      expect(scan(VECTOR, range[0], range[1], VECTOR.length)).toEqual(expected);
      // The hand-written expectation and the slow oracle agree.
      expect(expectedScan(VECTOR, range[0], range[1])).toEqual(expected);
    });
  }

  it("rejects invalid ranges with RangeError 'Invalid line range'", () => {
    for (const [start, end] of [
      [2, 2],
      [3, 1],
      [-1, undefined],
      [1.5, undefined],
      [Number.NaN, undefined],
      [0, Number.NaN],
      [0, 2.5],
      [Number.MAX_SAFE_INTEGER + 1, undefined],
      [0, Number.MAX_SAFE_INTEGER + 2],
    ] as [number, number | undefined][]) {
      expect(() => new LineScanner(start, end)).toThrow(new RangeError("Invalid line range"));
    }
    expect(() => new LineScanner(0, Number.POSITIVE_INFINITY)).not.toThrow();
  });

  it("handles files shorter than a BOM and empty files", () => {
    for (const bytes of [[], [0xef], [0xef, 0xbb], [0x0a], [0x0a, 0x0a], [0xef, 0xbb, 0xbf]]) {
      const data = Uint8Array.from(bytes);
      for (const [start, end] of [
        [0, undefined],
        [1, 2],
        [2, undefined],
      ] as [number, number | undefined][]) {
        expect(scan(data, start, end, 1)).toEqual(expectedScan(data, start, end));
      }
    }
  });

  it("equals whole-file TextDecoder decoding for random bytes, ranges and chunkings", () => {
    // Pieces that exercise BOMs, newlines, multi-byte, truncated and invalid sequences.
    const piece = fc.constantFrom(
      [0x0a],
      [0x0a],
      [0x61],
      [0xef, 0xbb, 0xbf],
      [0xc3, 0xa9],
      [0xe2, 0x82, 0xac],
      [0xf0, 0x9f, 0x98, 0x80],
      [0xe2, 0x82],
      [0xf0, 0x9f],
      [0x80],
      [0xff],
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0x0d],
    );
    const file = fc.array(piece, { maxLength: 40 }).map((pieces) => Uint8Array.from(pieces.flat()));
    fc.assert(
      fc.property(
        file,
        fc.nat(12),
        fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
        fc.integer({ min: 1, max: 17 }),
        (bytes, startLine, span, chunkSize) => {
          const endLine = span === undefined ? undefined : startLine + span;
          expect(scan(bytes, startLine, endLine, chunkSize)).toEqual(expectedScan(bytes, startLine, endLine));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
