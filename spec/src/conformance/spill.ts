/** Spill: thresholds counted over raw chunks, the raw spill file, and spill paths on timeout and abort. */
import type { ExecutionEnv } from "@outpost/sdk";
import { abortable, assert, bytes, execFails, hex, live, run, sleep, styleOf, value } from "./support.js";
import type { Define, Setup } from "./types.js";

const spillName = /^pi-output-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.log$/;

/** Checks where a spill file lives, returns its bytes and removes its directory. */
async function takeSpill(env: ExecutionEnv, spillPath: string | undefined): Promise<Uint8Array> {
  assert.ok(spillPath, "a spillPath");
  const path = styleOf(spillPath);
  assert.match(path.basename(spillPath), spillName);
  assert.match(path.basename(path.dirname(spillPath)), /^tmp-[A-Za-z0-9]{6}$/);
  const data = await bytes(env, spillPath);
  value(await env.remove(path.dirname(spillPath), { recursive: true }, live), "remove spill dir");
  return data;
}

/** Registers the spill cases. */
export function spillCases(setup: Setup, define: Define): void {
  const [shell, flag] = setup.shell;
  const once = (text: string) => [shell, flag, `printf '${text}'`];

  define(
    "output of exactly afterBytes bytes or afterLines lines does not spill; one more does",
    "X25 X26 X30",
    async (env) => {
      const exact = await run(env, once("abcde"), { spill: { afterBytes: 5, afterLines: 10 } });
      assert.deepEqual(value(exact.result, "5 bytes, afterBytes 5"), { exitCode: 0 });
      const over = await run(env, once("abcde"), { spill: { afterBytes: 4, afterLines: 10 } });
      assert.equal(hex(await takeSpill(env, value(over.result, "afterBytes 4").spillPath)), "6162636465");
      const lines = await run(env, once("a\\nb\\nc"), { spill: { afterBytes: 100, afterLines: 3 } });
      assert.deepEqual(value(lines.result, "3 lines, afterLines 3"), { exitCode: 0 });
      const terminated = await run(env, once("a\\nb\\n"), { spill: { afterBytes: 100, afterLines: 2 } });
      assert.deepEqual(value(terminated.result, "2 terminated lines, afterLines 2"), { exitCode: 0 });
      const moreLines = await run(env, once("a\\nb\\nc"), { spill: { afterBytes: 100, afterLines: 2 } });
      assert.equal(
        Buffer.from(await takeSpill(env, value(moreLines.result, "afterLines 2").spillPath)).toString(),
        "a\nb\nc",
      );
      const short = await run(env, once("short"), { spill: { afterBytes: 100, afterLines: 10 } });
      assert.deepEqual(value(short.result, "short"), { exitCode: 0 });
      assert.equal(short.stdout, "short");
      const silent = await run(env, ["true"], { spill: { afterBytes: 0, afterLines: 0 } });
      assert.deepEqual(value(silent.result, "no output never spills"), { exitCode: 0 });
    },
  );

  define("the spill file holds the exact raw output of both streams", "X26 R6", async (env) => {
    const raw = await run(env, once("f\\200\\000o"), { spill: { afterBytes: 0, afterLines: 0 } });
    assert.equal(hex(await takeSpill(env, value(raw.result, "raw").spillPath)), "6680006f");
    assert.equal(raw.stdout, "f\uFFFD\u0000o", "onOutput still receives decoded text");
    const bom = await run(env, once("\\357\\273\\277x"), { spill: { afterBytes: 0, afterLines: 0 } });
    assert.equal(hex(await takeSpill(env, value(bom.result, "bom").spillPath)), "efbbbf78");
    assert.equal(bom.stdout, "x");
    const mixed = await run(env, [shell, flag, "printf one; sleep 0.05; printf two >&2; sleep 0.05; printf three"], {
      spill: { afterBytes: 2, afterLines: 10 },
    });
    assert.equal(Buffer.from(await takeSpill(env, value(mixed.result, "mixed").spillPath)).toString(), "onetwothree");
  });

  define("the spill interleaves the streams in readiness order", "X26 X20", async (env) => {
    // stdout written right before stderr is read first, so it is spilled first: every time, with no pause.
    const spilled: string[] = [];
    for (let i = 0; i < 20; i++) {
      const out = await run(env, "printf one; printf two >&2", { spill: { afterBytes: 0, afterLines: 0 } });
      spilled.push(Buffer.from(await takeSpill(env, value(out.result, `run ${i}`).spillPath)).toString());
    }
    assert.deepEqual(spilled, Array(20).fill("onetwo"));
  });

  define("a spilled command keeps its whole output, however large", "X26 X27 X29", async (env) => {
    const out = await run(env, [shell, flag, "head -c 500000 /dev/zero | tr '\\0' x; echo; echo end"], {
      spill: { afterBytes: 1000, afterLines: 1000 },
    });
    const data = await takeSpill(env, value(out.result, "large").spillPath);
    assert.equal(data.length, 500_005);
    assert.equal(out.stdout.length, 500_005, "every chunk was delivered too");
    assert.ok(Buffer.from(data).toString().endsWith("x\nend\n"));
    const lines = await run(env, ["seq", "1", "15000"], { spill: { afterBytes: 1_000_000, afterLines: 100 } });
    const text = Buffer.from(await takeSpill(env, value(lines.result, "lines").spillPath)).toString();
    assert.equal(text.split("\n").length, 15001);
  });

  define(
    "a timed-out or aborted command that spilled carries the spill path",
    "X30 X26 T4",
    async (env) => {
      // The output must be out before the timeout or abort; a Windows shell under Wine can take seconds to start.
      const [limit, pause] = setup.windows ? [3, 3000] : [0.5, 400];
      const timedOut = await run(env, [shell, flag, "seq 1 50; sleep 10"], {
        timeout: limit,
        spill: { afterBytes: 10, afterLines: 100 },
      });
      const timeoutError = execFails(timedOut.result, "timeout", "timeout", `timeout:${limit}`);
      assert.equal(
        Buffer.from(await takeSpill(env, timeoutError.spillPath))
          .toString()
          .split("\n").length,
        51,
      );
      const { context, controller } = abortable();
      const pending = run(
        env,
        [shell, flag, "seq 1 50; sleep 10"],
        { spill: { afterBytes: 10, afterLines: 100 } },
        context,
      );
      await sleep(pause);
      controller.abort();
      const abortedOut = await pending;
      const abortError = execFails(abortedOut.result, "aborted", "aborted", "aborted");
      assert.ok((await takeSpill(env, abortError.spillPath)).length > 10);
      const quiet = await run(env, [shell, flag, "printf ab; sleep 5"], {
        timeout: 0.3,
        spill: { afterBytes: 10, afterLines: 10 },
      });
      const quietError = execFails(quiet.result, "timeout", "no spill");
      assert.equal(quietError.spillPath, undefined, "no spill, no spillPath");
    },
    { timeoutMs: setup.windows ? 40_000 : 15_000 },
  );

  define(
    "a spill that meets a callback error reports the callback error without a spill path",
    "X30 X21",
    async (env) => {
      const result = await env.exec(
        [shell, flag, "seq 1 100; sleep 5"],
        {
          spill: { afterBytes: 0, afterLines: 0 },
          onOutput: () => {
            throw new Error("callback failed");
          },
        },
        live,
      );
      const error = execFails(result, "callback_error", "callback", "callback failed");
      assert.equal(error.spillPath, undefined);
    },
  );
}
