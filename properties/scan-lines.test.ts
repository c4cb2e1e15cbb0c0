/**
 * `BinaryReader.scanLines` on random file contents against the conformance suite's independent model
 * `expectedScan`, which decodes the whole file with `TextDecoder` and splits it at newlines (durable-env.md §4.3:
 * sizes are those of the whole-file decode, a leading BOM is not counted, positions are raw bytes). Checked on the
 * reference and on each Outpost env; contents cross the 64 KiB read size with a multi-byte character split at the
 * boundary.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LineScan } from "@outpost/sdk";
import { expectedScan } from "@outpost/spec/conformance";
import fc from "fast-check";
import { beforeAll, expect } from "vitest";
import { concat, trickyBytes } from "./bytes.js";
import { propertyTest } from "./harness.js";
import { propertyFixture } from "./targets.js";

const BASE_RUNS = 300;
const BASE_TIME_MS = 12_000;
/** The read size of the scanners: a boundary inside a character must not change the sizes. */
const READ_SIZE = 65_536;

/** A line range as given to `scanLines`. */
interface Range {
  startLine: number;
  endLine: number | undefined;
}

/** What the model expects: a scan, or the `invalid` failure of a bad range. */
type Expected = { ok: true; value: LineScan } | { ok: false; code: "invalid" };

function isValidRange({ startLine, endLine }: Range): boolean {
  if (!Number.isSafeInteger(startLine) || startLine < 0) return false;
  return endLine === undefined || (Number.isSafeInteger(endLine) && endLine > startLine);
}

/** The model: the shared whole-file-decode scan for a valid range, else the `invalid` failure. */
function modelScan(bytes: Uint8Array, range: Range): Expected {
  if (!isValidRange(range)) return { ok: false, code: "invalid" };
  return { ok: true, value: expectedScan(bytes, range.startLine, range.endLine) };
}

/** File contents: tricky bytes, optionally padded so that the tail starts near a 64 KiB boundary. */
const contentsArb = fc
  .record({
    head: trickyBytes(12),
    align: fc.option(fc.integer({ min: -3, max: 3 }), { freq: 6 }),
    tail: trickyBytes(8),
  })
  .map(({ head, align, tail }) => {
    const pad = align === null ? 0 : Math.max(0, READ_SIZE + align - head.byteLength);
    return concat([head, new Uint8Array(pad).fill(0x78), tail]);
  });

const rangeArb: fc.Arbitrary<Range> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .tuple(fc.nat(8), fc.option(fc.integer({ min: 1, max: 4 }), { freq: 3 }))
      .map(([startLine, extra]) => ({ startLine, endLine: extra === null ? undefined : startLine + extra })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Range>(
      { startLine: -1, endLine: undefined },
      { startLine: 1.5, endLine: undefined },
      { startLine: 2, endLine: 2 },
      { startLine: 0, endLine: 2.5 },
    ),
  },
);

const fixture = propertyFixture();
const targets = [fixture.reference, ...fixture.targets];
let root: string;

beforeAll(() => {
  root = fixture.sandbox.root("scan");
});

const LIVE = { abortSignal: undefined };

function describeCase([bytes, ranges]: [Uint8Array, Range[]]): string {
  const shown =
    bytes.byteLength <= 200
      ? Buffer.from(bytes).toString("hex").replace(/(..)/g, "$1 ").trim()
      : `${bytes.byteLength} bytes: ${Buffer.from(bytes.subarray(0, 40)).toString("hex")}…${Buffer.from(bytes.subarray(-40)).toString("hex")}`;
  return `  file [${shown}]\n  ranges ${JSON.stringify(ranges)}`;
}

const name = "scanLines equals whole-file decoding on every env";
propertyTest(
  name,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(contentsArb, fc.array(rangeArb, { minLength: 1, maxLength: 4 }), async (bytes, ranges) => {
      writeFileSync(join(root, "f.bin"), bytes);
      const expected = ranges.map((range) => modelScan(bytes, range));
      for (const target of targets) {
        const opened = await target.at(root).openBinaryReader("f.bin", undefined, LIVE);
        if (!opened.ok) throw new Error(`${target.name}: openBinaryReader failed: ${opened.error.message}`);
        const actual: unknown[] = [];
        for (const range of ranges) {
          const result = await opened.value.scanLines(range, LIVE);
          actual.push(result.ok ? result : { ok: false, code: result.error.code });
        }
        await opened.value.close(LIVE);
        expect({ env: target.name, scans: actual }).toEqual({ env: target.name, scans: expected });
      }
    }),
  {
    runTimeoutMs: 20_000,
    describe: describeCase,
  },
);
