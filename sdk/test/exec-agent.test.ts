// CommandRunner against the real agent (runs once the agent implements exec). The agent and every command carry
// a marker variable, so the last check can prove that none of them outlives `close()`.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  canScanProcesses,
  leftoverProcesses,
  markedArgv,
  markerEnv,
  newProcessMarker,
  waitForNoLeftovers,
} from "../../spec/test/processes.js";
import type { Context, ShellExecOptions, ShellOutputInfo } from "../src/contract/types.js";
import { type CommandEnv, CommandRunner } from "../src/env/exec.js";
import { Connection } from "../src/wire/connection.js";
import { realAgent } from "./fixtures/real-agent.js";

const context: Context = { abortSignal: undefined };
const marker = newProcessMarker();

describe("exec on the real agent", () => {
  let connection: Connection;
  let runner: CommandRunner;
  let dir: string;
  let env: CommandEnv;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "outpost-exec-"));
    connection = new Connection({ command: markedArgv(marker, [realAgent]) });
    runner = new CommandRunner(connection);
    env = { cwd: dir, resolve: async (path) => resolve(dir, path), shellEnv: markerEnv(marker) };
  });
  afterAll(async () => {
    await connection.close();
    try {
      // Neither the agent nor any command it started (marked, or running in the test directory) may survive.
      expect(await waitForNoLeftovers({ marker, dirs: [dir] })).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  async function collect(command: string | string[], options: ShellExecOptions = {}, ctx = context) {
    const chunks: [string, ShellOutputInfo][] = [];
    const result = await runner.exec(
      command,
      { ...options, onOutput: (text, _context, info) => chunks.push([text, info]) },
      ctx,
      env,
    );
    const text = (stream: string) =>
      chunks
        .filter(([, info]) => info.stream === stream)
        .map(([chunk]) => chunk)
        .join("");
    return { result, stdout: text("stdout"), stderr: text("stderr") };
  }

  it("runs a shell command with both streams and its exit code", async () => {
    const { result, stdout, stderr } = await collect("printf out; printf err >&2; printf more; exit 7");
    expect(result).toEqual({ ok: true, value: { exitCode: 7 } });
    expect(stdout).toBe("outmore");
    expect(stderr).toBe("err");
  });

  it("runs an argv without a shell, in a resolved cwd, with only the given env", async () => {
    // Without inheritance shellEnv is dropped too, so the marker comes through `env` like any given variable.
    const given = { ONLY: "x", ...markerEnv(marker) };
    const { result, stdout } = await collect(["/usr/bin/env"], { cwd: ".", inheritEnv: false, env: given });
    expect(result).toEqual({ ok: true, value: { exitCode: 0 } });
    const expected = Object.entries(given).map(([name, value]) => `${name}=${value}`);
    expect(stdout.split("\n").slice(0, -1).sort()).toEqual(expected.sort());
    expect(stdout.endsWith("\n")).toBe(true);
  });

  it.runIf(canScanProcesses())("sees the marked agent and a marked command while they run", async () => {
    // The positive control of the final leftover check: the scan must find what it later asserts is gone.
    const { pid } = await connection.info();
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const command = runner.exec(
      "echo up; exec sleep 5",
      { onOutput: () => started() },
      { abortSignal: controller.signal },
      env,
    );
    await running;
    const seen = leftoverProcesses({ marker });
    controller.abort();
    expect(await command).toMatchObject({ ok: false, error: { code: "aborted" } });
    expect(seen.some((line) => line.startsWith(`${pid} `))).toBe(true);
    expect(seen.some((line) => / sleep 5$/.test(line))).toBe(true);
  });

  it("never spawns with an invalid timeout", async () => {
    const spawned = join(dir, "spawned");
    const result = await runner.exec(`touch ${spawned}`, { timeout: -1 }, context, env);
    expect(result.ok ? undefined : result.error).toMatchObject({ code: "timeout" });
    expect(existsSync(spawned)).toBe(false);
  });

  it("times out with the seconds in the message", async () => {
    const started = Date.now();
    const result = await runner.exec("sleep 5", { timeout: 0.2 }, context, env);
    expect(result.ok ? undefined : result.error).toMatchObject({ code: "timeout", message: "timeout:0.2" });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("removes a variable given as undefined, inherited or from shellEnv", async () => {
    const withVariable = { ...env, shellEnv: { ...env.shellEnv, OUTPOST_TEST_GONE: "from shellEnv" } };
    const printed = async (options: ShellExecOptions) => {
      let text = "";
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      const script = 'printf %s "${OUTPOST_TEST_GONE-unset}"';
      const onOutput = (chunk: string) => {
        text += chunk;
      };
      const result = await runner.exec(script, { ...options, onOutput }, context, withVariable);
      expect(result.ok).toBe(true);
      return text;
    };
    expect(await printed({})).toBe("from shellEnv");
    // Node's spawn skips undefined values, so the key removes the variable.
    const unset = { OUTPOST_TEST_GONE: undefined } as unknown as Record<string, string>;
    expect(await printed({ env: unset })).toBe("unset");
    expect(await printed({ env: unset, inheritEnv: false })).toBe("unset");
  });

  it("aborts mid-run", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runner.exec("sleep 5", undefined, { abortSignal: controller.signal }, env);
    expect(result.ok ? undefined : result.error).toMatchObject({ code: "aborted", message: "aborted" });
  });

  it("aborts a command whose signal fires while its cwd is being resolved, before it is sent", async () => {
    const controller = new AbortController();
    // The abort fires during the cwd's resolution: the signal is already aborted when the request would go out.
    const abortingCwd: CommandEnv = {
      ...env,
      resolve: async (path) => {
        controller.abort();
        return resolve(dir, path);
      },
    };
    const started = performance.now();
    const result = await runner.exec("sleep 5", { cwd: "." }, { abortSignal: controller.signal }, abortingCwd);
    expect(result.ok ? undefined : result.error).toMatchObject({ code: "aborted" });
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("kills running commands on cleanup with status 137", async () => {
    const running = runner.exec("echo started; sleep 5", { onOutput: () => void runner.cleanup() }, context, env);
    expect(await running).toEqual({ ok: true, value: { exitCode: 137 } });
  });

  it("reports a throwing callback and stops the command", async () => {
    const started = Date.now();
    const result = await runner.exec(
      "echo one; sleep 5; echo two",
      {
        onOutput: () => {
          throw new Error("callback failed");
        },
      },
      context,
      env,
    );
    expect(result.ok ? undefined : result.error).toMatchObject({ code: "callback_error", message: "callback failed" });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("spills the complete output to a file", async () => {
    const { result } = await collect("seq 1 20000", { spill: { afterBytes: 100, afterLines: 10 } });
    expect(result.ok).toBe(true);
    const spillPath = result.ok ? result.value.spillPath : undefined;
    expect(typeof spillPath).toBe("string");
    const lines = (await readFile(spillPath!, "utf8")).split("\n");
    expect(lines.length).toBe(20001);
    expect(lines[19999]).toBe("20000");
  });
  it("transfers only about a window of output a caller keeps, with exact counts", async () => {
    const total = 5_000_000;
    const full = "0123456789abcdef\n".repeat(Math.ceil(total / 17)).slice(0, total);
    const window = { maxBytes: 1000, maxLines: 20, minIntervalMs: 20, bytesPerSecond: 1_000_000 };
    const chunks: [string, ShellOutputInfo][] = [];
    const result = await runner.exec(
      `yes 0123456789abcdef | head -c ${total}`,
      { window, onOutput: (text, _context, info) => chunks.push([text, info]) },
      context,
      env,
    );
    expect(result).toEqual({ ok: true, value: { exitCode: 0 } });
    const delivered = chunks.reduce((sum, [text]) => sum + Buffer.byteLength(text), 0);
    const skipped = chunks.reduce((sum, [, info]) => sum + (info.skipped?.bytes ?? 0), 0);
    expect(delivered + skipped).toBe(total);
    expect(skipped).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(total / 10);
    const lastSkip = chunks.findLastIndex(([, info]) => info.skipped !== undefined);
    const tail = chunks
      .slice(lastSkip)
      .map(([text]) => text)
      .join("");
    expect(full.endsWith(tail)).toBe(true);
    const tailLines = tail.split("\n").length - 1;
    expect(Buffer.byteLength(tail) > window.maxBytes || tailLines > window.maxLines).toBe(true);
    const skippedNewlines = chunks.reduce((sum, [, info]) => sum + (info.skipped?.newlines ?? 0), 0);
    const deliveredNewlines = chunks.reduce((sum, [text]) => sum + text.split("\n").length - 1, 0);
    expect(skippedNewlines + deliveredNewlines).toBe(full.split("\n").length - 1);
  });
});
