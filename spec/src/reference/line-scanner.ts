/**
 * One-pass line locator behind `BinaryReader.scanLines`: byte positions of lines `[startLine, endLine)` and the
 * UTF-8 sizes of the same lines as `new TextDecoder().decode(wholeFile)` would produce them.
 *
 * Byte positions always count every byte of the file; decoded sizes leave out a leading byte-order mark and
 * count each U+FFFD as three bytes. A line k starts right after the k-th newline byte (0x0A).
 */
import type { TextDecoder } from "node:util";
import { beginsWithBom, plainUtf8Decoder } from "./decode.js";
import type { LineScan } from "./types.js";

const NEWLINE = 0x0a;
/** Length of the UTF-8 byte-order mark, which must be seen whole before the first byte is decoded. */
const BOM_LENGTH = 3;

type Decoder = TextDecoder;

/** UTF-8 length of decoder output; the output is always well-formed, so `Buffer.byteLength` is exact. */
function utf8Length(text: string): number {
  return text.length === 0 ? 0 : Buffer.byteLength(text, "utf8");
}

/** Scans bytes pushed in file order and reports a `LineScan` when the file ends. */
export class LineScanner {
  readonly #startLine: number;
  readonly #endLine: number;
  #position = 0;
  #newlines = 0;
  #lineStart = 0;
  #start: number | undefined;
  #end: number | undefined;
  #firstLineEnd: number | undefined;
  #lastLineStart: number | undefined;
  #selectedBytes = 0;
  #firstLineBytes = 0;
  #selection: Decoder | undefined;
  #firstLine: Decoder | undefined;
  /** The first bytes of the file, held until three are known so a BOM can be recognised; `undefined` once released. */
  #head: number[] | undefined = [];
  #bom = false;

  /**
   * @throws RangeError "Invalid line range" unless `startLine` is a non-negative safe integer and `endLine` is
   *   greater than it and either `+Infinity` or a safe integer.
   */
  constructor(startLine: number, endLine: number = Number.POSITIVE_INFINITY) {
    const validEnd = endLine > startLine && (endLine === Number.POSITIVE_INFINITY || Number.isSafeInteger(endLine));
    if (!Number.isSafeInteger(startLine) || startLine < 0 || !validEnd) throw new RangeError("Invalid line range");
    this.#startLine = startLine;
    this.#endLine = endLine;
    if (startLine === 0) this.#begin(0);
  }

  /** Feeds the next bytes of the file. */
  push(chunk: Uint8Array): void {
    let rest = chunk;
    const head = this.#head;
    if (head !== undefined) {
      const take = Math.min(BOM_LENGTH - head.length, rest.length);
      for (let i = 0; i < take; i++) head.push(rest[i]);
      rest = rest.subarray(take);
      if (head.length < BOM_LENGTH) return;
      this.#releaseHead();
    }
    if (rest.length > 0) this.#process(rest);
  }

  /** Ends the file and returns the scan. */
  finish(): LineScan {
    if (this.#head !== undefined) this.#releaseHead();
    const size = this.#position;
    if (this.#start === undefined) {
      // The selection starts past the last line: an empty selection at end of file.
      return {
        newlines: this.#newlines,
        start: size,
        end: size,
        firstLineEnd: size,
        lastLineStart: size,
        selectedBytes: 0,
        firstLineBytes: 0,
      };
    }
    if (this.#firstLine !== undefined) this.#endFirstLine(size);
    if (this.#selection !== undefined) this.#endSelection(size);
    return {
      newlines: this.#newlines,
      start: this.#start,
      end: this.#end ?? size,
      firstLineEnd: this.#firstLineEnd ?? size,
      lastLineStart: this.#lastLineStart ?? this.#lineStart,
      selectedBytes: this.#selectedBytes,
      firstLineBytes: this.#firstLineBytes,
    };
  }

  #releaseHead(): void {
    const head = Uint8Array.from(this.#head ?? []);
    this.#head = undefined;
    this.#bom = beginsWithBom(head);
    if (head.length > 0) this.#process(head);
  }

  #begin(at: number): void {
    this.#start = at;
    if (this.#startLine === this.#endLine - 1) this.#lastLineStart = at;
    this.#selection = plainUtf8Decoder();
    this.#firstLine = plainUtf8Decoder();
  }

  /** Processes bytes that start at the current position. */
  #process(bytes: Uint8Array): void {
    const base = this.#position;
    let from = 0;
    for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) {
      this.#feed(bytes, base, from, i);
      const endedLine = this.#newlines;
      if (endedLine === this.#startLine) this.#endFirstLine(base + i);
      if (endedLine === this.#endLine - 1) this.#endSelection(base + i);
      // A newline between two selected lines belongs to the selection.
      this.#feed(bytes, base, i, i + 1);
      this.#newlines++;
      this.#lineStart = base + i + 1;
      if (this.#newlines === this.#startLine) this.#begin(this.#lineStart);
      if (this.#newlines === this.#endLine - 1) this.#lastLineStart = this.#lineStart;
      from = i + 1;
    }
    this.#feed(bytes, base, from, bytes.length);
    this.#position += bytes.length;
  }

  /** Decodes `bytes[from, to)` into every open decoder, leaving out the BOM (file offsets below 3). */
  #feed(bytes: Uint8Array, base: number, from: number, to: number): void {
    const first = this.#bom ? Math.max(from, BOM_LENGTH - base) : from;
    if (first >= to) return;
    const piece = bytes.subarray(first, to);
    if (this.#selection !== undefined)
      this.#selectedBytes += utf8Length(this.#selection.decode(piece, { stream: true }));
    if (this.#firstLine !== undefined)
      this.#firstLineBytes += utf8Length(this.#firstLine.decode(piece, { stream: true }));
  }

  #endFirstLine(at: number): void {
    this.#firstLineEnd = at;
    if (this.#firstLine !== undefined) this.#firstLineBytes += utf8Length(this.#firstLine.decode());
    this.#firstLine = undefined;
  }

  #endSelection(at: number): void {
    this.#end = at;
    if (this.#selection !== undefined) this.#selectedBytes += utf8Length(this.#selection.decode());
    this.#selection = undefined;
  }
}
