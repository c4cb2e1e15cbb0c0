// CommandRunner (the SDK half of exec) against a fake agent whose `exec` replies follow a script passed as the
// command string: what the SDK validates, sends, delivers and how it maps the agent's answers.
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ExecutionError } from "../src/contract/errors.js";
import type { Context, ShellExecOptions, ShellOutputInfo } from "../src/contract/types.js";
import { type CommandEnv, CommandRunner } from "../src/env/exec.js";
import { closedAfterEach } from "./fixtures/connections.js";

const FAKE = fileURLToPath(new URL("./fixtures/fake-agent.mjs", import.meta.url));

interface Script {
  events?: { text?: string; stream?: string; skipped?: unknown; kind?: string }[];
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
  waitCancel?: boolean;
  after?: { text?: string }[];
  exit?: boolean;
}

const connect = closedAfterEach();

function setup(envOverrides: Partial<CommandEnv> = {}) {
  const connection = connect({ command: [process.execPath, FAKE, "good"] });
  const runner = new CommandRunner(connection);
  const env: CommandEnv = {
    cwd: "work/raw/../dir",
    resolve: async (path) => posix.resolve("/base", path),
    ...envOverrides,
  };
  const context: Context = { abortSignal: undefined };
  const run = (script: Script, options?: ShellExecOptions, ctx: Context = context) =>
    runner.exec(JSON.stringify(script), options, ctx, env);
  const received = async () => {
    const { json } = await connection.request("received", {});
    return json as { ops: string[]; cancels: Record<string, unknown>[]; requests: Record<string, unknown>[] };
  };
  const execRequests = async () => (await received()).requests.filter((request) => request.op === "exec");
  return { connection, runner, env, context, run, received, execRequests };
}

function failure(result: { ok: boolean; error?: unknown }): ExecutionError {
  expect(result.ok).toBe(false);
  expect(result.error).toBeInstanceOf(ExecutionError);
  return result.error as ExecutionError;
}

describe("checks before anything is sent", () => {
  it("returns aborted for an already-aborted context without starting the agent", async () => {
    const { connection, run } = setup();
    const result = await run({}, undefined, { abortSignal: AbortSignal.abort() });
    expect(failure(result)).toMatchObject({ code: "aborted", message: "aborted" });
    expect(connection.session()).toBeUndefined();
  });

  it.each([0, -1, -0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null, "5", true, {}, [1]])(
    "rejects timeout %s",
    async (timeout) => {
      const { connection, run } = setup();
      const result = await run({}, { timeout: timeout as number });
      expect(failure(result)).toMatchObject({
        code: "timeout",
        message: "Invalid timeout: must be a finite number of seconds",
      });
      expect(connection.session()).toBeUndefined();
    },
  );

  it.each([2_147_484, 2_147_483.648, 1e12])("rejects timeout %s as above the maximum", async (timeout) => {
    const { connection, run } = setup();
    const result = await run({}, { timeout });
    expect(failure(result)).toMatchObject({
      code: "timeout",
      message: "Invalid timeout: maximum is 2147483.647 seconds",
    });
    expect(connection.session()).toBeUndefined();
  });

  it("checks abort before the timeout", async () => {
    const { run } = setup();
    const result = await run({}, { timeout: -1 }, { abortSignal: AbortSignal.abort() });
    expect(failure(result).code).toBe("aborted");
  });

  it("accepts exactly 2147483.647 seconds and sends it in milliseconds", async () => {
    const { run, execRequests } = setup();
    expect(await run({}, { timeout: 2_147_483.647 })).toEqual({ ok: true, value: { exitCode: 0 } });
    expect(await run({}, { timeout: 0.25 })).toEqual({ ok: true, value: { exitCode: 0 } });
    const [first, second] = await execRequests();
    expect(first.timeoutMs).toBe(2_147_483_647);
    expect(second.timeoutMs).toBe(250);
  });
});

describe("the exec request", () => {
  it("sends a string command with the raw env cwd, the merged env and the shell", async () => {
    const { runner, context, env, execRequests } = setup({
      shellPath: "/bin/custom-sh",
      shellEnv: { BASE: "1", SHADOWED: "base", DROPPED: undefined },
    });
    await runner.exec("{}", { env: { SHADOWED: "mine", EXTRA: "" } }, context, env);
    const [request] = await execRequests();
    expect(request).toEqual({
      command: "{}",
      cwd: "work/raw/../dir",
      // DROPPED is undefined in shellEnv: Node leaves it out of the child's env, so it unsets an inherited DROPPED.
      env: { BASE: "1", SHADOWED: "mine", DROPPED: null, EXTRA: "" },
      inheritEnv: true,
      shellPath: "/bin/custom-sh",
      op: "exec",
    });
  });

  it("sends an argv, resolves options.cwd, and with inheritEnv false only the command's env", async () => {
    const { runner, context, env, execRequests } = setup({ shellEnv: { BASE: "1" } });
    const spill = { afterBytes: 10, afterLines: 2 };
    const window = { maxBytes: 100, maxLines: 5, minIntervalMs: 10, bytesPerSecond: 1000 };
    await runner.exec(
      ["printf", "x"],
      { cwd: "sub", inheritEnv: false, env: { ONLY: "me" }, spill, window },
      context,
      env,
    );
    const [request] = await execRequests();
    expect(request).toEqual({
      argv: ["printf", "x"],
      cwd: "/base/sub",
      env: { ONLY: "me" },
      inheritEnv: false,
      spill,
      window,
      op: "exec",
    });
  });

  it("uses the env cwd as is for an empty options.cwd", async () => {
    const { run, execRequests } = setup();
    await run({}, { cwd: "" });
    expect((await execRequests())[0].cwd).toBe("work/raw/../dir");
  });

  it("makes env keys and values well-formed", async () => {
    const { run, execRequests } = setup({ shellEnv: { "K\ud800": "v\udc00" } });
    await run({}, { env: { OK: "a\ud83d" } });
    expect((await execRequests())[0].env).toEqual({ "K\ufffd": "v\ufffd", OK: "a\ufffd" });
  });

  it("reports a failing cwd resolution as unknown", async () => {
    const { run, connection } = setup({
      resolve: async () => {
        throw new Error("cannot reach the agent");
      },
    });
    const error = failure(await run({}, { cwd: "x" }));
    expect(error).toMatchObject({ code: "unknown", message: "cannot reach the agent" });
    expect(connection.session()).toBeUndefined();
  });
});

describe("output", () => {
  it("delivers decoded chunks in order with exactly {stream} or {stream, skipped}", async () => {
    const { run, context } = setup();
    const seen: [string, Context, ShellOutputInfo][] = [];
    const skipped = { bytes: 12, newlines: 3, endsWithNewline: true };
    const result = await run(
      {
        events: [
          { text: "out" },
          { text: "err", stream: "stderr" },
          { text: "" },
          { text: "ignored", kind: "progress" },
          { text: "\ufeffbom kept" },
          { text: "tail", stream: "stderr", skipped },
        ],
        result: { exitCode: 3 },
      },
      { onOutput: (text, ctx, info) => seen.push([text, ctx, info]) },
    );
    expect(result).toEqual({ ok: true, value: { exitCode: 3 } });
    expect(seen).toEqual([
      ["out", context, { stream: "stdout" }],
      ["err", context, { stream: "stderr" }],
      ["\ufeffbom kept", context, { stream: "stdout" }],
      ["tail", context, { stream: "stderr", skipped }],
    ]);
    expect(Object.keys(seen[0][2])).toEqual(["stream"]);
    expect(seen[0][1]).toBe(context);
  });

  it("delivers nothing after the command settled", async () => {
    const { run, connection } = setup();
    const seen: string[] = [];
    await run({ events: [{ text: "before" }], after: [{ text: "after" }] }, { onOutput: (text) => seen.push(text) });
    await connection.request("echo", {});
    expect(seen).toEqual(["before"]);
  });

  it("turns a throwing callback into callback_error once, cancels the command and stops delivering", async () => {
    const { run, received } = setup();
    let calls = 0;
    const result = await run(
      { events: [{ text: "a" }, { text: "b" }, { text: "c" }], waitCancel: true },
      {
        onOutput: () => {
          calls++;
          throw new Error("callback failed");
        },
      },
    );
    const error = failure(result);
    expect(error).toMatchObject({ code: "callback_error", message: "callback failed" });
    expect(error.cause).toBeInstanceOf(Error);
    expect(calls).toBe(1);
    expect((await received()).cancels).toEqual([{ id: 2 }]);
  });

  it("uses Durable's toError for a thrown non-Error", async () => {
    const { run } = setup();
    const result = await run(
      { events: [{ text: "a" }], result: { exitCode: 0 } },
      {
        onOutput: () => {
          throw { reason: "x" };
        },
      },
    );
    expect(failure(result)).toMatchObject({ code: "callback_error", message: '{"reason":"x"}' });
  });
});

describe("results and errors", () => {
  it("returns exactly {exitCode}, or {exitCode, spillPath} when the output spilled", async () => {
    const { run } = setup();
    const plain = await run({ result: { exitCode: 0 } });
    expect(plain).toEqual({ ok: true, value: { exitCode: 0 } });
    expect(Object.keys(plain.ok ? plain.value : {})).toEqual(["exitCode"]);
    expect(await run({ result: { exitCode: 137, spillPath: "/tmp/x.log" } })).toEqual({
      ok: true,
      value: { exitCode: 137, spillPath: "/tmp/x.log" },
    });
  });

  it.each([
    [5, "timeout:5"],
    [0.1, "timeout:0.1"],
    [1e-7, "timeout:1e-7"],
  ])("maps an agent timeout with timeout %s to %j", async (timeout, message) => {
    const { run } = setup();
    const error = failure(await run({ error: { code: "timeout", message: "whatever" } }, { timeout }));
    expect(error).toMatchObject({ code: "timeout", message });
    expect(error.spillPath).toBeUndefined();
  });

  it("copies spillPath onto timeout and aborted errors", async () => {
    const { run } = setup();
    const timedOut = failure(await run({ error: { code: "timeout", message: "t", spillPath: "/s1" } }, { timeout: 1 }));
    expect(timedOut).toMatchObject({ code: "timeout", message: "timeout:1", spillPath: "/s1" });
    const aborted = failure(await run({ error: { code: "aborted", message: "x", spillPath: "/s2" } }));
    expect(aborted).toMatchObject({ code: "aborted", message: "aborted", spillPath: "/s2" });
  });

  it.each([
    ["shell_unavailable", "Custom shell path not found: /nope", "shell_unavailable"],
    ["spawn_error", "spawn nope ENOENT", "spawn_error"],
    ["EINVAL", "exec needs cwd", "unknown"],
    ["unknown", "Failed to preserve complete shell output: ENOSPC", "unknown"],
  ])("maps agent code %s", async (code, message, expected) => {
    const { run } = setup();
    const error = failure(await run({ error: { code, message, spillPath: "/not-copied" } }));
    expect(error).toMatchObject({ code: expected, message });
    expect(error.spillPath).toBeUndefined();
  });

  it("reports a lost connection as unknown", async () => {
    const { run } = setup();
    const error = failure(await run({ exit: true }));
    expect(error).toMatchObject({ code: "unknown", message: "outpost agent connection lost" });
  });

  it("cancels when the context aborts mid-run", async () => {
    const { run, received, connection } = setup();
    const controller = new AbortController();
    const result = run({ waitCancel: true }, undefined, { abortSignal: controller.signal });
    await connection.info();
    await connection.request("echo", {});
    controller.abort();
    expect(failure(await result)).toMatchObject({ code: "aborted", message: "aborted" });
    expect((await received()).cancels).toEqual([{ id: 2 }]);
  });

  it("cleanup kills every running command without aborting it", async () => {
    const { run, runner, received, connection } = setup();
    const first = run({ waitCancel: true });
    const second = run({ waitCancel: true });
    await connection.info();
    await connection.request("echo", {});
    await runner.cleanup();
    expect(await first).toEqual({ ok: true, value: { exitCode: 137 } });
    expect(await second).toEqual({ ok: true, value: { exitCode: 137 } });
    const { cancels } = await received();
    expect(cancels).toHaveLength(2);
    expect(cancels.every((cancel) => cancel.mode === "kill")).toBe(true);
    // Nothing left to kill: a second cleanup sends nothing.
    await runner.cleanup();
    expect((await received()).cancels).toHaveLength(2);
  });
});
