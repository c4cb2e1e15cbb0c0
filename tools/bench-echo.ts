// The transport floor of the bench: a message of a hello request's size written to a pipe whose far end echoes it
// (`cat` in a child process, or on an SSH channel), timed until every byte is back. No framing, no JSON, no agent.
import type { Readable, Writable } from "node:stream";

/** One echo round trip; resolves when all the bytes came back. */
export type Echo = () => Promise<void>;

/** An echo over `input` → `output`; one round trip at a time (the bench awaits each call). */
export function echoThrough(input: Writable, output: Readable, size: number): Echo {
  const message = Buffer.alloc(size, 0x61);
  let missing = 0;
  let done: (() => void) | undefined;
  output.on("data", (chunk: Buffer) => {
    missing -= chunk.length;
    if (missing <= 0 && done !== undefined) {
      const resolve = done;
      done = undefined;
      resolve();
    }
  });
  return () =>
    new Promise<void>((resolve) => {
      missing = size;
      done = resolve;
      input.write(message);
    });
}
