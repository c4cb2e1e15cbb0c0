/**
 * Aborts that land while a request is in flight, after the entry checkpoint has passed (spec/semantics.md A3).
 * A real env is made to wait on a FIFO: opening one blocks until the other end is opened. Each case starts the
 * call, waits until the env's process is blocked in that open (Linux shows it in `/proc/<pid>/task/<tid>/wchan`),
 * aborts, then opens the other end so the open completes — only the checkpoint after the open can see the abort.
 */
import type { Context, ExecutionEnv } from "@outpost/sdk";
import { abortable, assert, at, fails, live, run, script } from "./support.js";
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
