/**
 * The reference `LineScanner` against hand-written scans of the conformance sample and against the whole-file
 * model `expectedScan` (shared with the conformance cases and the property test, independent of every scanner).
 */
import type { LineScan } from "@outpost/sdk";
import { expectedScan, scanSample } from "@outpost/spec/conformance";
import { LineScanner } from "@outpost/spec/reference";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

function scan(bytes: Uint8Array, startLine: number, endLine: number | undefined, chunkSize: number): LineScan {
  const scanner = new LineScanner(startLine, endLine);
  for (let at = 0; at < bytes.length; at += chunkSize) scanner.push(bytes.subarray(at, at + chunkSize));
  return scanner.finish();
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
        expect(scan(scanSample, range[0], range[1], chunkSize)).toEqual(expected);
      }
      expect(scan(scanSample, range[0], range[1], scanSample.length)).toEqual(expected);
      // The hand-written expectation and the slow oracle agree.
      expect(expectedScan(scanSample, range[0], range[1])).toEqual(expected);
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
