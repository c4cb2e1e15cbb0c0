/**
 * Windowed exec: an env may omit output outside the caller's window, but what it delivers plus what it reports
 * as skipped must add up to the whole output, and the tail must be exact. Holds whether or not the env skips.
 */
import type { ShellOutputWindow } from "@outpost/sdk";
import { assert, type Captured, run, value } from "./support.js";
import type { Define, Setup } from "./types.js";

const newlinesIn = (text: string) => text.split("\n").length - 1;

/**
 * Replays the chunks against the full expected output: each skip must cover exactly the bytes it reports and be
 * followed by more than the window; each delivered chunk must be the next part of the output.
 */
function checkWindowed(out: Captured, expected: string, window: ShellOutputWindow): void {
  const full = Buffer.from(expected);
  let position = 0;
  let skippedBytes = 0;
  let skippedNewlines = 0;
  // The text after the latest omission: it must end up larger than the window before the next omission.
  let sinceSkip: { index: number; text: string } | undefined;
  const checkSinceSkip = () => {
    if (sinceSkip === undefined) return;
    assert.ok(
      Buffer.byteLength(sinceSkip.text) > window.maxBytes || newlinesIn(sinceSkip.text) > window.maxLines,
      `skip ${sinceSkip.index} is followed by more than the window`,
    );
  };
  out.chunks.forEach((chunk, index) => {
    if (chunk.skipped && chunk.skipped.bytes > 0) {
      checkSinceSkip();
      sinceSkip = { index, text: "" };
      const omitted = full.subarray(position, position + chunk.skipped.bytes).toString();
      assert.equal(Buffer.byteLength(omitted), chunk.skipped.bytes, `skip ${index} stays inside the output`);
      assert.equal(chunk.skipped.newlines, newlinesIn(omitted), `skip ${index}: newlines`);
      assert.equal(chunk.skipped.endsWithNewline, omitted.endsWith("\n"), `skip ${index}: endsWithNewline`);
      position += chunk.skipped.bytes;
      skippedBytes += chunk.skipped.bytes;
      skippedNewlines += chunk.skipped.newlines;
    }
    if (sinceSkip !== undefined) sinceSkip.text += chunk.text;
    const size = Buffer.byteLength(chunk.text);
    assert.equal(
      chunk.text,
      full.subarray(position, position + size).toString(),
      `chunk ${index} continues the output`,
    );
    position += size;
  });
  checkSinceSkip();
  assert.equal(position, full.length, "delivered + skipped bytes equal the output");
  const delivered = out.chunks.map((chunk) => chunk.text).join("");
  assert.equal(newlinesIn(delivered) + skippedNewlines, newlinesIn(expected), "delivered + skipped newlines");
  assert.equal(Buffer.byteLength(delivered) + skippedBytes, full.length, "delivered + skipped bytes");
  const lastLines = expected
    .split("\n")
    .slice(-(window.maxLines + 1))
    .join("\n");
  assert.ok(delivered.endsWith(lastLines), "the delivered text ends with the window's tail");
}

/** Registers the window cases. */
export function windowCases(setup: Setup, define: Define): void {
  const [shell, flag] = setup.shell;
  const window: ShellOutputWindow = { maxBytes: 200, maxLines: 5, minIntervalMs: 0, bytesPerSecond: 1e9 };

  define("windowed exec keeps the exact tail and counts what it skips", "XW1 XW3 XW7", async (env) => {
    const out = await run(env, [shell, flag, 'i=1; while [ $i -le 2000 ]; do echo "line $i"; i=$((i+1)); done'], {
      window,
    });
    assert.deepEqual(value(out.result, "exec"), { exitCode: 0 });
    const expected = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join("");
    checkWindowed(out, expected, window);
  });

  define("windowed exec of a large fast stream still adds up", "XW3 XW4 XW5 XW6 XW7", async (env) => {
    const out = await run(env, [shell, flag, "yes 0123456789abcdef | head -c 3000000"], {
      window: { maxBytes: 1000, maxLines: 20, minIntervalMs: 20, bytesPerSecond: 1_000_000 },
    });
    assert.deepEqual(value(out.result, "exec"), { exitCode: 0 });
    const expected = "0123456789abcdef\n".repeat(Math.ceil(3_000_000 / 17)).slice(0, 3_000_000);
    checkWindowed(out, expected, { maxBytes: 1000, maxLines: 20, minIntervalMs: 20, bytesPerSecond: 1_000_000 });
  });

  define("a window larger than a frame loses nothing", "XW3 XW4 XW5", async (env) => {
    // 20 MB of 40 MB held by a paced window used to go out as one payload over the frame limit: the agent then
    // dropped every later chunk and still reported exit 0.
    const large: ShellOutputWindow = { maxBytes: 20_000_000, maxLines: 1e12, minIntervalMs: 300, bytesPerSecond: 1e12 };
    let delivered = 0;
    let skipped = 0;
    let tail = "";
    const result = await env.exec(
      [shell, flag, "head -c 40000000 /dev/zero | tr '\\0' x; printf end"],
      {
        window: large,
        onOutput: (text, _context, info) => {
          delivered += Buffer.byteLength(text);
          skipped += info.skipped?.bytes ?? 0;
          tail = (tail + text).slice(-3);
        },
      },
      { abortSignal: undefined },
    );
    assert.deepEqual(value(result, "exec"), { exitCode: 0 });
    assert.equal(delivered + skipped, 40_000_003, "delivered + skipped bytes equal the output");
    assert.ok(delivered > large.maxBytes, `at least the window is delivered (${delivered})`);
    assert.equal(tail, "end", "the output's end arrives");
  });

  define("a window missing a field is no window", "XW2 XW1", async (env) => {
    const partial = { maxBytes: 10, maxLines: 1 } as unknown as ShellOutputWindow;
    const out = await run(env, [shell, flag, "seq 1 3000"], { window: partial });
    assert.equal(out.stdout, `${Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")}\n`);
    assert.ok(
      out.chunks.every((chunk) => chunk.skipped === undefined),
      "nothing skipped",
    );
  });

  define("windowed exec delivers short output whole", "XW1 XW3", async (env) => {
    const out = await run(env, [shell, flag, "printf 'a\\nb\\n'; printf 'e' >&2"], { window });
    assert.equal(out.stdout, "a\nb\n");
    assert.equal(out.stderr, "e");
    assert.ok(
      out.chunks.every((chunk) => chunk.skipped === undefined || chunk.skipped.bytes === 0),
      "nothing skipped",
    );
  });
}
