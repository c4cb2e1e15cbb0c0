/**
 * Output order across the two streams (spec X20): a command makes random single writes to stdout or stderr,
 * most followed by a 10 ms pause, and every env must deliver them in readiness order: each delivered chunk is
 * consecutive writes of its stream and starts with the oldest write not delivered yet. While the reader keeps up
 * with the pauses that is exactly the write order; without a pause (or when the reader stalls longer, on a loaded
 * machine), a stream's later writes may join its earlier ones in one read, under Node as under the agent.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { beforeAll, expect } from "vitest";
import { propertyTest } from "./harness.js";
import { propertyFixture } from "./targets.js";

/** One write: a stream and a short word; `pause` is false for the occasional write with no pause after it. */
interface Write {
  stream: "stdout" | "stderr";
  word: string;
  pause?: boolean;
}

const writeArb: fc.Arbitrary<Write> = fc.record({
  stream: fc.constantFrom("stdout", "stderr"),
  word: fc.stringMatching(/^[a-z0-9]{1,8}$/),
  pause: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
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

/** A script that performs the writes in order, each followed by a 10 ms pause unless it asks for none. */
function script(writes: readonly Write[]): string {
  return writes
    .map((w) => `printf '${w.word}\\n'${w.stream === "stderr" ? " >&2" : ""}${w.pause === false ? "" : "; sleep 0.01"}`)
    .join("; ");
}

/**
 * Why `delivered` is not readiness order for `writes`, or undefined when it is: every write delivered once, each
 * chunk the next writes of its stream, starting with the oldest undelivered write (X20).
 */
function readinessViolation(writes: readonly Write[], delivered: readonly Write[]): string | undefined {
  const done = writes.map(() => false);
  const nextOf = (stream: Write["stream"], from: number) => {
    let i = from;
    while (i < writes.length && (done[i] || writes[i].stream !== stream)) i++;
    return i;
  };
  const next = { stdout: nextOf("stdout", 0), stderr: nextOf("stderr", 0) };
  for (const [index, chunk] of delivered.entries()) {
    const oldest = done.indexOf(false);
    // What both streams hold when reading starts is read stdout first (libuv registers stdout first), so the
    // first chunk may be stdout's even when stderr was written before.
    const atStart = index === 0 && chunk.stream === "stdout";
    if (next[chunk.stream] !== oldest && !atStart) {
      return `chunk ${index} (${chunk.stream}) starts after the older write ${oldest}`;
    }
    let rest = chunk.word;
    while (rest !== "") {
      const i = next[chunk.stream];
      if (i >= writes.length || !rest.startsWith(writes[i].word))
        return `chunk ${index} is not its stream's next writes`;
      rest = rest.slice(writes[i].word.length);
      done[i] = true;
      next[chunk.stream] = nextOf(chunk.stream, i + 1);
    }
  }
  const missing = done.indexOf(false);
  return missing === -1 ? undefined : `write ${missing} was not delivered`;
}

const name = "every env delivers single writes separated by pauses in readiness order";
propertyTest(
  name,
  { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
  () =>
    fc.asyncProperty(fc.array(writeArb, { minLength: 2, maxLength: 10 }), async (writes) => {
      const lines = writes.map((w) => ({ stream: w.stream, word: `${w.word}\n` }));
      for (const { name: envName, env } of envs) {
        const delivered: Write[] = [];
        const result = await env.exec(
          script(writes),
          { onOutput: (text, _context, info) => delivered.push({ stream: info.stream, word: text }) },
          { abortSignal: undefined },
        );
        expect(result.ok, `${envName}: exec succeeds`).toBe(true);
        const shown = delivered.map((d) => `${d.stream}:${JSON.stringify(d.word)}`).join(" ");
        expect(readinessViolation(lines, delivered), `${envName}: delivered ${shown}`).toBeUndefined();
      }
    }),
  {
    runTimeoutMs: 20_000,
    describe: ([writes]) => writes.map((w) => `${w.stream}:${w.word}`).join(" "),
  },
);
