/**
 * Aborts that land while a request is in flight, after the entry checkpoint has passed (spec/semantics.md A3).
 * A real env is made to wait on a FIFO: opening one blocks until the other end is opened. Each case starts the
 * call, waits until the env's process is blocked in that open (Linux shows it in `/proc/<pid>/task/<tid>/wchan`),
 * aborts, then opens the other end so the open completes — only the checkpoint after the open can see the abort.
 */
import type { Context, ExecutionEnv } from "@outpost/sdk";
import { abortable, assert, at, fails, live, run, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

/**
 * A shell loop that exits 0 once a thread of the process that spawned it (the env's own process: the agent, or
 * the reference's Node) is blocked opening a FIFO, and 1 after about 10 seconds.
 */
const waitForBlockedOpen = [
  "i=0",
  "until grep -qsxE 'wait_for_partner|fifo_open' /proc/$PPID/task/*/wchan; do",
  "  i=$((i+1)); [ $i -ge 1000 ] && { echo 'no thread is blocked opening the FIFO' >&2; exit 1; }",
  "  sleep 0.01",
  "done",
].join("\n");

/** Registers the abort-in-flight cases (Linux targets with FIFOs). */
export function abortInFlightCases(setup: Setup, define: Define): void {
  if (!setup.fifos || !setup.linux || setup.windows) return;
  const [shell, flag] = setup.shell;

  /** Starts `call` with a live signal, aborts it once the env blocks opening `fifo`, then lets the open finish. */
  async function abortWhileOpening<T>(
    env: ExecutionEnv,
    call: (context: Context) => Promise<T>,
    otherEnd: string,
  ): Promise<{ result: T; otherEndOutput: string }> {
    const { context, controller } = abortable();
    const pending = call(context);
    await script(setup, env, waitForBlockedOpen);
    controller.abort();
    const other = await run(env, [shell, flag, otherEnd], { timeout: 10 });
    assert.equal(other.exitCode, 0, `the other end of the FIFO: ${other.stderr}`);
    return { result: await pending, otherEndOutput: other.stdout };
  }

  define(
    "an abort while writeFile is blocked writing a piece lets that piece finish and writes no piece after it",
    "W1 W9 A3",
    async (env) => {
      const piece = 512 * 1024;
      const content = new Uint8Array(16 * piece).map((_, index) => (index * 7 + (index >> 19)) & 0xff);
      await script(setup, env, "mkfifo fifo");
      // A reader that takes the first two pieces, then stops reading (keeping the FIFO open, so the writer blocks
      // in the middle of a piece, not on a closed pipe) until told to drain the rest. The abort comes once it has
      // the two pieces: the writer is then in the third or at its checkpoint, and cannot finish all 16 before the
      // drain, which an agent starts only after the cancels that precede it on the wire.
      const reader = run(env, [
        shell,
        flag,
        "exec 3<fifo; head -c 1048576 <&3 >first; until [ -e go ]; do sleep 0.01; done; cat <&3 >rest",
      ]);
      const { context, controller } = abortable();
      const pending = env.writeFile("fifo", content, context);
      await script(
        setup,
        env,
        [
          "i=0",
          "until [ -s first ] && [ $(wc -c <first) -eq 1048576 ]; do",
          "  i=$((i+1)); [ $i -ge 1000 ] && { echo 'the reader never got two pieces' >&2; exit 1; }",
          "  sleep 0.01",
          "done",
        ].join("\n"),
      );
      controller.abort();
      await script(setup, env, ": > go");
      fails(await pending, "aborted", "writeFile", at(env, "fifo"));
      assert.equal((await reader).exitCode, 0, "the reader");
      const first = value(await env.readBinaryFile("first", live), "first");
      const rest = value(await env.readBinaryFile("rest", live), "rest");
      const total = first.length + rest.length;
      assert.equal(total % piece, 0, `${total} bytes: whole pieces only`);
      assert.ok(total >= 2 * piece && total < content.length, `${total / piece} pieces of 16`);
      assert.deepEqual(Buffer.concat([first, rest]), Buffer.from(content.subarray(0, total)), "a prefix");
    },
  );

  define(
    "an abort while openTextLineReader or readTextLines is opening the file fails aborted after the open",
    "A1 A3 R7",
    async (env) => {
      await script(setup, env, "mkfifo fifo");
      const opened = await abortWhileOpening(env, (context) => env.openTextLineReader("fifo", context), ": > fifo");
      fails(opened.result, "aborted", "openTextLineReader", at(env, "fifo"));
      const lines = await abortWhileOpening(
        env,
        (context) => env.readTextLines("fifo", undefined, context),
        ": > fifo",
      );
      fails(lines.result, "aborted", "readTextLines", at(env, "fifo"));
    },
  );

  define(
    "an abort while readTextFile or readBinaryFile is opening the file fails aborted at Node's next checkpoint",
    "A2 A3 R1 R2",
    async (env) => {
      await script(setup, env, "mkfifo fifo");
      const text = await abortWhileOpening(env, (context) => env.readTextFile("fifo", context), ": > fifo");
      fails(text.result, "aborted", "readTextFile", at(env, "fifo"));
      const binary = await abortWhileOpening(env, (context) => env.readBinaryFile("fifo", context), ": > fifo");
      fails(binary.result, "aborted", "readBinaryFile", at(env, "fifo"));
    },
  );

  define(
    "an abort while writeFile is opening the file fails aborted before the first write: nothing is written",
    "A2 A3 A6 W1",
    async (env) => {
      await script(setup, env, "mkfifo fifo");
      const written = await abortWhileOpening(env, (context) => env.writeFile("fifo", "never", context), "cat fifo");
      fails(written.result, "aborted", "writeFile", at(env, "fifo"));
      assert.equal(written.otherEndOutput, "", "the reader got nothing");
    },
  );

  define(
    "an abort while appendFile is opening the file appends everything and still fails aborted",
    "A3 A6 W3",
    async (env) => {
      await script(setup, env, "mkfifo fifo");
      const appended = await abortWhileOpening(
        env,
        (context) => env.appendFile("fifo", "all of it", context),
        "cat fifo",
      );
      fails(appended.result, "aborted", "appendFile", at(env, "fifo"));
      assert.equal(appended.otherEndOutput, "all of it", "the reader got the whole append");
    },
  );

  define("an open that was not aborted while it waited succeeds", "A3 R7", async (env) => {
    await script(setup, env, "mkfifo fifo");
    const opened = await abortWhileOpening(env, () => env.openTextLineReader("fifo", live), ": > fifo");
    const reader = opened.result;
    assert.ok(reader.ok, "openTextLineReader with a live context");
    if (reader.ok) await reader.value.close(live);
  });
}
