/**
 * The SDK half of `exec`: what `NodeExecutionEnv` decides before spawning (abort, timeout validation, cwd, env),
 * delivering output to `onOutput`, and the result precedence. The agent runs the process.
 */

import { ExecutionError } from "../contract/errors.js";
import { err, ok, type Result, toError } from "../contract/result.js";
import type {
  Context,
  ShellExecOptions,
  ShellExecResult,
  ShellOutputInfo,
  ShellOutputSkip,
} from "../contract/types.js";
import { type Connection, isConnectionLost, RemoteError } from "../wire/connection.js";
import { wellFormed } from "../wire/frame.js";

/** Node's largest timer delay, so the largest timeout `exec` accepts (in ms). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** What `exec` needs from the env that runs it. */
export interface CommandEnv {
  /** The env's raw `cwd`, used as is when the command gives none. */
  cwd: string;
  /** The env's path resolution (relative to `cwd`, `~`, `file://`), applied to `options.cwd`. */
  resolve: (path: string) => Promise<string>;
  shellPath?: string;
  shellEnv?: Record<string, string | undefined>;
  /**
   * The environment commands inherit, read now, when the client knows it better than the agent: a local agent's
   * environment is a snapshot taken at its start, while Node's `exec` reads `process.env` at every call. The merged
   * environment is then sent complete, with `inheritEnv: false`.
   */
  hostEnv?: Record<string, string | undefined>;
}

/** Runs commands on the agent and tracks the running ones so `cleanup()` can kill them. */
export class CommandRunner {
  readonly #connection: Connection;
  /** Request id → session of every command that has not settled. */
  readonly #running = new Map<number, number>();

  /** Creates a runner over `connection`. */
  constructor(connection: Connection) {
    this.#connection = connection;
  }

  /** `ExecutionEnv.exec`, with results equal to `NodeExecutionEnv`'s on the agent's machine. */
  async exec<C extends Context>(
    command: string | readonly string[],
    options: ShellExecOptions<C> | undefined,
    context: C,
    env: CommandEnv,
  ): Promise<Result<ShellExecResult, ExecutionError>> {
    const signal = context.abortSignal;
    if (signal?.aborted) return err(new ExecutionError("aborted", "aborted"));
    const timeout = options?.timeout;
    const invalid = validateTimeout(timeout);
    if (invalid !== undefined) return err(invalid);

    let cwd: string;
    try {
      cwd = options?.cwd ? await env.resolve(options.cwd) : env.cwd;
    } catch (thrown) {
      const error = toError(thrown);
      return err(new ExecutionError("unknown", error.message, error));
    }
    const inheritEnv = options?.inheritEnv !== false;
    const sendsWholeEnv = inheritEnv && env.hostEnv !== undefined;
    const base = sendsWholeEnv ? { ...env.hostEnv, ...env.shellEnv } : inheritEnv ? env.shellEnv : undefined;
    const request: Record<string, unknown> = {
      ...(typeof command === "string" ? { command } : { argv: [...command] }),
      cwd,
      env: mergeEnv(base, options?.env, inheritEnv && !sendsWholeEnv),
      inheritEnv: inheritEnv && !sendsWholeEnv,
    };
    if (env.shellPath) request.shellPath = env.shellPath;
    if (timeout !== undefined) request.timeoutMs = timeout * 1000;
    if (options?.spill !== undefined) request.spill = options.spill;
    if (options?.window !== undefined) request.window = options.window;
    return this.#run(request, options, context);
  }

  /** Kills (without aborting) every command still running; they settle with the killed status (137). */
  async cleanup(): Promise<void> {
    for (const [id, session] of this.#running) this.#connection.kill(id, session);
    this.#running.clear();
  }

  async #run<C extends Context>(
    request: Record<string, unknown>,
    options: ShellExecOptions<C> | undefined,
    context: C,
  ): Promise<Result<ShellExecResult, ExecutionError>> {
    const signal = context.abortSignal;
    const onOutput = options?.onOutput;
    // Our own cancel source: the caller's abort and a throwing onOutput both cancel the command.
    const cancel = new AbortController();
    const forwardAbort = () => cancel.abort();
    if (signal?.aborted) cancel.abort();
    else signal?.addEventListener("abort", forwardAbort, { once: true });

    let settled = false;
    let callbackError: ExecutionError | undefined;
    let requestId: number | undefined;
    // The agent already dropped a leading BOM per stream; any later U+FEFF is text and must be kept.
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const onEvent = (json: Record<string, unknown>, payload: Uint8Array) => {
      if (settled || callbackError !== undefined || json.kind !== "output" || onOutput === undefined) return;
      const text = decoder.decode(payload);
      if (text === "") return;
      try {
        onOutput(text, context, outputInfo(json));
      } catch (thrown) {
        const error = toError(thrown);
        callbackError = new ExecutionError("callback_error", error.message, error);
        cancel.abort();
      }
    };

    try {
      const reply = await this.#connection.request("exec", request, {
        signal: cancel.signal,
        // onEvent decodes each payload at once and keeps nothing of it.
        transientEvents: true,
        onEvent,
        onStart: (id, session) => {
          requestId = id;
          this.#running.set(id, session);
        },
      });
      if (callbackError !== undefined) return err(callbackError);
      return ok(toExecResult(reply.json));
    } catch (thrown) {
      if (callbackError !== undefined) return err(callbackError);
      return err(toExecutionError(thrown, options?.timeout));
    } finally {
      settled = true;
      if (requestId !== undefined) this.#running.delete(requestId);
      signal?.removeEventListener("abort", forwardAbort);
    }
  }
}

/** Node's checks of `options.timeout` (seconds), with its exact messages. */
function validateTimeout(timeout: unknown): ExecutionError | undefined {
  if (timeout === undefined) return undefined;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
    return new ExecutionError("timeout", "Invalid timeout: must be a finite number of seconds");
  }
  if (timeout * 1000 > MAX_TIMEOUT_MS) {
    return new ExecutionError("timeout", "Invalid timeout: maximum is 2147483.647 seconds");
  }
  return undefined;
}

/**
 * `{...base, ...overrides}` as Node passes it to a child, keys made well-formed (the frame encoder fixes only values)
 * and values stringified the way `spawn` does. Node skips `undefined` values, so such a key removes an inherited
 * variable: when inheriting it goes on the wire as `null`, which the agent reads as "unset"; otherwise it is dropped.
 */
function mergeEnv(
  base: Record<string, string | undefined> | undefined,
  overrides: Record<string, string> | undefined,
  inheritEnv: boolean,
): Record<string, string | null> {
  const merged: Record<string, string | null> = {};
  for (const [key, value] of Object.entries({ ...base, ...overrides })) {
    if (value !== undefined) merged[wellFormed(key)] = `${value}`;
    else if (inheritEnv) merged[wellFormed(key)] = null;
  }
  return merged;
}

function outputInfo(json: Record<string, unknown>): ShellOutputInfo {
  const stream = json.stream === "stderr" ? "stderr" : "stdout";
  const skipped = json.skipped;
  if (typeof skipped !== "object" || skipped === null) return { stream };
  const fields = skipped as Record<string, unknown>;
  const skip: ShellOutputSkip = {
    bytes: Number(fields.bytes),
    newlines: Number(fields.newlines),
    endsWithNewline: fields.endsWithNewline === true,
  };
  return { stream, skipped: skip };
}

function toExecResult(json: Record<string, unknown>): ShellExecResult {
  const exitCode = typeof json.exitCode === "number" ? json.exitCode : 1;
  return typeof json.spillPath === "string" ? { exitCode, spillPath: json.spillPath } : { exitCode };
}

/**
 * Maps the agent's error (or a lost connection) onto `ExecutionError`, as `NodeExecutionEnv` would report it. Like
 * Node's, these errors carry no `cause` (the agent's error frame is not something Node would have), except a lost
 * connection, whose `RemoteError` is kept as the cause for diagnosis.
 */
function toExecutionError(thrown: unknown, timeout: number | undefined): ExecutionError {
  if (!(thrown instanceof RemoteError) || isConnectionLost(thrown)) {
    // A lost agent never ran (or never finished) the command: the outcome is unknown, not a spawn failure.
    const error = toError(thrown);
    return new ExecutionError("unknown", error.message, error);
  }
  let error: ExecutionError;
  switch (thrown.code) {
    case "timeout":
      error = new ExecutionError("timeout", "timeout:" + String(timeout));
      break;
    case "aborted":
      error = new ExecutionError("aborted", "aborted");
      break;
    case "shell_unavailable":
    case "spawn_error":
      return new ExecutionError(thrown.code, thrown.message);
    default:
      return new ExecutionError("unknown", thrown.message);
  }
  const spillPath = thrown.fields.spillPath;
  if (typeof spillPath === "string") error.spillPath = spillPath;
  return error;
}
