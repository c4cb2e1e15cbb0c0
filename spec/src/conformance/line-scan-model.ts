/**
 * The model of `BinaryReader.scanLines` that every scanner test checks against (the conformance cases, the
 * reference scanner's unit test, the property test): line positions from the newline bytes, sizes from ONE
 * whole-file `TextDecoder` decode (durable-env.md §4.3). It shares no code with any scanner it checks.
 */
import assert from "node:assert/strict";
import type { LineScan } from "@outpost/sdk";
import { unhex } from "./support.js";

/** The scan sample (16 bytes): BOM, invalid sequence before a newline, empty line, later U+FEFF, no final newline. */
export const scanSample = unhex("efbbbf 61 0a e282 0a 0a efbbbf 62 0a c3a9");

/** What `scanLines` must return for a valid range, computed from decoding the whole file at once. */
export function expectedScan(data: Uint8Array, startLine: number, endLine = Number.POSITIVE_INFINITY): LineScan {
  const starts = [0];
  for (let i = 0; i < data.length; i++) if (data[i] === 0x0a) starts.push(i + 1);
  const newlines = starts.length - 1;
  const size = data.length;
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
  const lines = new TextDecoder().decode(data).split("\n");
  assert.equal(lines.length, newlines + 1, "the decoded text has one line more than the file has newline bytes");
  const last = Math.min(endLine - 1, newlines);
  const lineEnd = (line: number) => (line < newlines ? starts[line + 1] - 1 : size);
  const utf8 = (text: string) => Buffer.byteLength(text, "utf8");
  return {
    newlines,
    start: starts[startLine],
    end: lineEnd(last),
    firstLineEnd: lineEnd(startLine),
    lastLineStart: starts[last],
    selectedBytes: utf8(lines.slice(startLine, last + 1).join("\n")),
    firstLineBytes: utf8(lines[startLine]),
  };
}
