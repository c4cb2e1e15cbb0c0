/**
 * The agent's output decoder against `TextDecoder`: random bytes, split at random points into writes to stdout
 * and stderr (some separated by short sleeps so they reach the agent as separate reads, some padded so a
 * character straddles a 64 KiB read), printed by a command run through `LocalExecutionEnv.exec`. The text
 * `onOutput` delivers per stream must equal `new TextDecoder().decode(<that stream's bytes>)`: invalid sequences
 * become U+FFFD exactly as WHATWG says, a BOM is dropped only at the start of each stream, and a character split
 * across reads survives.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { beforeAll, expect } from "vitest";
import { concat, printfEscapes, trickyBytes } from "./bytes.js";
import { propertyTest } from "./harness.js";
import { localTarget, propertyFixture } from "./targets.js";

/** One write of the command. */
interface Chunk {
  stream: "stdout" | "stderr";
  /** ASCII `a` bytes written right before `bytes` in the same write burst (crosses the agent's read size). */
  pad: number;
  bytes: Uint8Array;
  /** Sleep after this write, so the next one arrives as a separate read. */
  pause: boolean;
}

const chunkArb: fc.Arbitrary<Chunk> = fc.record({
  stream: fc.constantFrom("stdout", "stderr"),
  pad: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constantFrom(65_535, 65_534) }),
  bytes: trickyBytes(6),
  pause: fc.boolean(),
});

const BASE_RUNS = 200;
const BASE_TIME_MS = 15_000;

const fixture = propertyFixture([localTarget()]);
let env: ExecutionEnv;

beforeAll(() => {
  env = fixture.targets[0].at(fixture.sandbox.root("decoder"));
});

/** A shell script that performs the chunks' writes in order. */
function script(chunks: readonly Chunk[]): string {
  return chunks
    .map((chunk) => {
      const redirect = chunk.stream === "stderr" ? " >&2" : "";
      const pad = chunk.pad > 0 ? `head -c ${chunk.pad} /dev/zero | tr '\\0' a; ` : "";
      const write = `{ ${pad}printf '${printfEscapes(chunk.bytes)}'; }${redirect}`;
      return chunk.pause ? `${write}; sleep 0.01` : write;
    })
    .join("; ");
}

function expectedText(chunks: readonly Chunk[], stream: Chunk["stream"]): string {
  const parts = chunks
    .filter((chunk) => chunk.stream === stream)
    .flatMap((chunk) => [new Uint8Array(chunk.pad).fill(0x61), chunk.bytes]);
  return new TextDecoder().decode(concat(parts));
}

function describeChunks(chunks: readonly Chunk[]): string {
  return chunks
    .map((chunk) => {
      const bytes = Buffer.from(chunk.bytes).toString("hex").replace(/(..)/g, "$1 ").trim();
      const pad = chunk.pad > 0 ? `${chunk.pad}×"a" + ` : "";
      return `  ${chunk.stream}: ${pad}[${bytes}]${chunk.pause ? " (pause)" : ""}`;
    })
    .join("\n");
}

const name = "LocalExecutionEnv decodes command output like TextDecoder, however the bytes are split";
propertyTest(
  name,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(fc.array(chunkArb, { minLength: 1, maxLength: 6 }), async (chunks) => {
      const received = { stdout: "", stderr: "" };
      const result = await env.exec(
        script(chunks),
        { onOutput: (text, _context, info) => (received[info.stream] += text) },
        { abortSignal: undefined },
      );
      const outcome = result.ok ? result : { ok: false, code: result.error.code, message: result.error.message };
      expect(outcome).toEqual({ ok: true, value: { exitCode: 0 } });
      expect(received).toEqual({ stdout: expectedText(chunks, "stdout"), stderr: expectedText(chunks, "stderr") });
    }),
  {
    runTimeoutMs: 20_000,
    describe: ([chunks]) => describeChunks(chunks),
  },
);
