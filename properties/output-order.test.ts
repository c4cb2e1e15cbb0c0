/**
 * Output order across the two streams (spec X20): a command makes random single writes to stdout or stderr,
 * each followed by a 10 ms pause, and every env must deliver them in the order they were written. A pause lets
 * each write become readable before the next one, and every env reads the streams in readiness order, so the
 * delivered order is the write order. Consecutive writes to one stream may still arrive as one chunk (one read
 * takes all a stream holds), so both sides are compared as runs of one stream.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { beforeAll, expect } from "vitest";
import { propertyTest } from "./harness.js";
import { propertyFixture } from "./targets.js";

/** One write: a stream and a short word. */
interface Write {
  stream: "stdout" | "stderr";
  word: string;
}

const writeArb: fc.Arbitrary<Write> = fc.record({
  stream: fc.constantFrom("stdout", "stderr"),
  word: fc.stringMatching(/^[a-z0-9]{1,8}$/),
});

const BASE_RUNS = 25;
const BASE_TIME_MS = 40_000;

const fixture = propertyFixture();
const envs: { name: string; env: ExecutionEnv }[] = [];

beforeAll(() => {
  for (const target of [fixture.reference, ...fixture.targets]) {
    envs.push({ name: target.name, env: target.at(fixture.sandbox.root("order")) });
  }
});

/** A script that performs the writes in order, each followed by a 10 ms pause. */
function script(writes: readonly Write[]): string {
  return writes.map((w) => `printf '${w.word}\\n'${w.stream === "stderr" ? " >&2" : ""}; sleep 0.01`).join("; ");
}

/** Joins consecutive pieces of the same stream: the order of the runs is what readiness order fixes. */
function runs(pieces: readonly Write[]): string[] {
  const out: { stream: string; text: string }[] = [];
  for (const piece of pieces) {
    const last = out.at(-1);
    if (last !== undefined && last.stream === piece.stream) last.text += piece.word;
    else out.push({ stream: piece.stream, text: piece.word });
  }
  return out.map((run) => `${run.stream}:${JSON.stringify(run.text)}`);
}

const name = "every env delivers single writes separated by pauses in write order";
propertyTest(
  name,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(fc.array(writeArb, { minLength: 2, maxLength: 10 }), async (writes) => {
      const expected = runs(writes.map((w) => ({ stream: w.stream, word: `${w.word}\n` })));
      for (const { name: envName, env } of envs) {
        const delivered: Write[] = [];
        const result = await env.exec(
          script(writes),
          { onOutput: (text, _context, info) => delivered.push({ stream: info.stream, word: text }) },
          { abortSignal: undefined },
        );
        expect(result.ok, `${envName}: exec succeeds`).toBe(true);
        expect(runs(delivered), `${envName}: delivered order`).toEqual(expected);
      }
    }),
  {
    runTimeoutMs: 20_000,
    describe: ([writes]) => writes.map((w) => `${w.stream}:${w.word}`).join(" "),
  },
);
