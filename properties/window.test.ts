/**
 * The output window's invariant (spec XW3): for any window and any output, the bytes `onOutput` delivers plus
 * the bytes its `skipped` infos report equal the bytes of the decoded output, and likewise for newlines; and the
 * last delivered chunk ends with the output's last character. The outputs mix both streams, sizes from nothing to 40 MB
 * (past the frame size and the agent's 64 KiB pieces), multi-byte characters cut by `head -c`, and pauses.
 */
import type { ExecutionEnv, ShellOutputWindow } from "@outpost/sdk";
import fc from "fast-check";
import { beforeAll, expect } from "vitest";
import { concat } from "./bytes.js";
import { propertyTest } from "./harness.js";
import { propertyFixture } from "./targets.js";

/** One write burst: `yes <word> | head -c <size>` on a stream, optionally followed by a pause. */
interface Burst {
  stream: "stdout" | "stderr";
  word: string;
  size: number;
  pause: boolean;
}

const burstArb: fc.Arbitrary<Burst> = fc.record({
  stream: fc.constantFrom("stdout", "stderr"),
  word: fc.constantFrom("y", "ab cd", "€", "😀x", ""),
  size: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 8_000_000 })),
  pause: fc.boolean(),
});

const windowArb: fc.Arbitrary<ShellOutputWindow> = fc.record({
  maxBytes: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 20_000_000 })),
  maxLines: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1_000_000 })),
  minIntervalMs: fc.integer({ min: 0, max: 100 }),
  bytesPerSecond: fc.constantFrom(1e4, 1e6, 1e9),
});

const BASE_RUNS = 20;
const BASE_TIME_MS = 40_000;

const fixture = propertyFixture();
const envs: { name: string; env: ExecutionEnv }[] = [];

beforeAll(() => {
  for (const target of fixture.targets)
    envs.push({ name: target.name, env: target.at(fixture.sandbox.root("window")) });
});

function script(bursts: readonly Burst[]): string {
  return bursts
    .map((b) => {
      const redirect = b.stream === "stderr" ? " >&2" : "";
      return `yes '${b.word}' | head -c ${b.size}${redirect}${b.pause ? "; sleep 0.01" : ""}`;
    })
    .join("; ");
}

/** The raw bytes a burst writes. */
function burstBytes(b: Burst): Uint8Array {
  const line = Buffer.from(`${b.word}\n`);
  const out = Buffer.alloc(b.size);
  for (let i = 0; i < b.size; i += line.length) line.copy(out, i, 0, Math.min(line.length, b.size - i));
  return out;
}

/** The decoded text of one stream, as the env decodes it (TextDecoder over the stream's bytes). */
function decoded(bursts: readonly Burst[], stream: Burst["stream"]): string {
  return new TextDecoder().decode(concat(bursts.filter((b) => b.stream === stream).map(burstBytes)));
}

const newlines = (text: string) => text.split("\n").length - 1;

const name = "windowed exec: delivered + skipped = produced, for any window and any output";
propertyTest(
  name,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(windowArb, fc.array(burstArb, { minLength: 1, maxLength: 5 }), async (window, bursts) => {
      const texts = [decoded(bursts, "stdout"), decoded(bursts, "stderr")];
      const produced = { bytes: 0, newlines: 0 };
      for (const text of texts) {
        produced.bytes += Buffer.byteLength(text);
        produced.newlines += newlines(text);
      }
      for (const { name: envName, env } of envs) {
        const seen = { bytes: 0, newlines: 0 };
        let lastChunk = "";
        const result = await env.exec(
          script(bursts),
          {
            window,
            onOutput: (text, _context, info) => {
              seen.bytes += Buffer.byteLength(text) + (info.skipped?.bytes ?? 0);
              seen.newlines += newlines(text) + (info.skipped?.newlines ?? 0);
              lastChunk = text;
            },
          },
          { abortSignal: undefined },
        );
        expect(result.ok ? result.value : result.error.message, `${envName}: result`).toEqual({ exitCode: 0 });
        expect(seen, `${envName}: delivered + skipped`).toEqual(produced);
        const lastBurst = bursts.filter((b) => b.size > 0).at(-1);
        if (lastBurst !== undefined && bursts.every((b) => b.size === 0 || b.stream === lastBurst.stream)) {
          // One stream only: the last character of the output is always delivered, last.
          const text = texts[lastBurst.stream === "stdout" ? 0 : 1];
          expect(Array.from(lastChunk).at(-1), `${envName}: the end arrives`).toEqual(Array.from(text).at(-1));
        }
      }
    }),
  {
    runTimeoutMs: 30_000,
    describe: ([window, bursts]) => `${JSON.stringify(window)}\n${script(bursts)}`,
  },
);
