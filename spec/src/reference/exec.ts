/**
 * `exec` of the reference env, step for step as Durable's `NodeExecutionEnv`: validation, shell lookup, cwd
 * check, spawn in a new process group, per-stream decoding, `onOutput`, the 100 ms post-exit grace, spill, and
 * result precedence.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { BomDroppingDecoder } from "./decode.js";
import { ExecutionError, type FileError } from "./errors.js";
import { resolvePath } from "./paths.js";
import { err, ok, type Result, toError } from "./result.js";
import { findShell, killProcessTree } from "./shell.js";
import { Spill } from "./spill.js";
import type { Context, ShellExecOptions, ShellExecResult, ShellOutputInfo } from "./types.js";

const onWindows = process.platform === "win32";

/** Largest timeout in milliseconds (Node's timer limit). */
export const MAX_TIMEOUT_MS = 2_147_483_647;
/** Quiet time after the process exited before the pipes are abandoned. */
export const EXIT_STDIO_GRACE_MS = 100;
/** Exit code offset of a process killed by a signal. */
export const SIGNAL_EXIT_OFFSET = 128;

/** The parts of the env `exec` reads and calls. */
export interface ExecHost {
  readonly cwd: string;
  readonly shellPath: string | undefined;
  readonly shellEnv: NodeJS.ProcessEnv | undefined;
  /** Pids of commands whose `exec` has not settled; `cleanup()` kills their trees. */
  readonly activePids: Set<number>;
  createTempFile(
    options: { prefix?: string; suffix?: string } | undefined,
    context: Context,
  ): Promise<Result<string, FileError>>;
}

/** What to spawn, after validation. */
interface Launch {
  program: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Command text written to stdin (legacy WSL launcher only). */
  stdinText: string | undefined;
}

type StreamName = ShellOutputInfo["stream"];

/** How the process ended: an exit code, or the signal that killed it. */
interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Runs `command` for the env `host`. Never throws. */
export async function runExec(
  host: ExecHost,
  command: string | readonly string[],
  options: ShellExecOptions | undefined,
  context: Context,
): Promise<Result<ShellExecResult, ExecutionError>> {
  if (context.abortSignal?.aborted) return err(new ExecutionError("aborted", "aborted"));
  const timeout = options?.timeout;
  const invalidTimeout = validateTimeout(timeout);
  if (invalidTimeout !== undefined) return err(invalidTimeout);
  const cwd = options?.cwd ? resolvePath(host.cwd, options.cwd) : host.cwd;

  let program: string;
  let args: string[];
  let stdinText: string | undefined;
  if (typeof command === "string") {
    const shell = await findShell(host.shellPath);
    if (!shell.ok) return shell;
    program = shell.value.shell;
    args = shell.value.stdinTransport ? [...shell.value.args] : [...shell.value.args, command];
    stdinText = shell.value.stdinTransport ? command : undefined;
  } else {
    if (command.length === 0) return err(new ExecutionError("spawn_error", "Empty argv: no program to run"));
    program = command[0];
    args = command.slice(1);
  }

  try {
    await access(cwd);
  } catch (error) {
    const message = `Working directory does not exist: ${cwd}\nCannot execute bash commands.`;
    return err(new ExecutionError("spawn_error", message, toError(error)));
  }

  const env: NodeJS.ProcessEnv =
    options?.inheritEnv === false ? { ...options.env } : { ...process.env, ...host.shellEnv, ...options?.env };
  try {
    return await runProcess(host, { program, args, cwd, env, stdinText }, options, context);
  } catch (error) {
    // A synchronous spawn failure (e.g. "spawn ENOTDIR") or the child's `error` event ("spawn x ENOENT").
    const cause = toError(error);
    return err(new ExecutionError("spawn_error", cause.message, cause));
  }
}

/** The timeout error for an invalid `timeout`, or `undefined` when it is absent or valid. */
function validateTimeout(timeout: unknown): ExecutionError | undefined {
  if (timeout === undefined) return undefined;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
    return new ExecutionError("timeout", "Invalid timeout: must be a finite number of seconds");
  }
  if (timeout * 1000 > MAX_TIMEOUT_MS) {
    return new ExecutionError("timeout", `Invalid timeout: maximum is ${MAX_TIMEOUT_MS / 1000} seconds`);
  }
  return undefined;
}

/** Exit code of an ended process: its code, else 128 + the host's number for the signal, else 1. */
export function exitCodeOf(ending: Ending): number {
  if (ending.code !== null) return ending.code;
  if (ending.signal !== null) {
    const numbers = constants.signals as Partial<Record<string, number>>;
    return SIGNAL_EXIT_OFFSET + (numbers[ending.signal] ?? 0);
  }
  return 1;
}

function withSpillPath(error: ExecutionError, spillPath: string | undefined): ExecutionError {
  if (spillPath !== undefined) error.spillPath = spillPath;
  return error;
}

async function runProcess(
  host: ExecHost,
  launch: Launch,
  options: ShellExecOptions | undefined,
  context: Context,
): Promise<Result<ShellExecResult, ExecutionError>> {
  const signal = context.abortSignal;
  const timeout = options?.timeout;
  const child = spawn(launch.program, launch.args, {
    cwd: launch.cwd,
    env: launch.env,
    detached: !onWindows,
    stdio: [launch.stdinText === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid !== undefined) host.activePids.add(pid);

  let settled = false;
  let timedOut = false;
  let callbackError: ExecutionError | undefined;
  const kill = () => {
    if (pid !== undefined) killProcessTree(pid);
  };
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          kill();
        }, timeout * 1000);
  const onAbort = () => kill();
  if (signal?.aborted) kill();
  else signal?.addEventListener("abort", onAbort, { once: true });

  try {
    if (launch.stdinText !== undefined && child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(launch.stdinText);
    }
    const pipes = pipesOf(child);
    const spill =
      options?.spill === undefined
        ? undefined
        : new Spill(options.spill, {
            pause: () => {
              for (const pipe of pipes) pipe.pause();
            },
            resume: () => {
              for (const pipe of pipes) pipe.resume();
            },
            holdPaused: () => callbackError !== undefined || timedOut || signal?.aborted === true,
            kill,
            createFile: () => host.createTempFile({ prefix: "pi-output-", suffix: ".log" }, context),
          });

    const onOutput = options?.onOutput;
    const deliver = (stream: StreamName, text: string) => {
      if (text.length === 0 || settled || onOutput === undefined || callbackError !== undefined) return;
      try {
        // The info is exactly `{stream}`: NodeExecutionEnv never skips output, whatever `window` says.
        onOutput(text, context, { stream });
      } catch (thrown) {
        const cause = toError(thrown);
        callbackError = new ExecutionError("callback_error", cause.message, cause);
        kill();
      }
    };
    const decoders: Record<StreamName, BomDroppingDecoder> = {
      stdout: new BomDroppingDecoder(),
      stderr: new BomDroppingDecoder(),
    };

    const ending = await waitForProcess(child, pipes, {
      onChunk: (stream, chunk) => {
        deliver(stream, decoders[stream].write(chunk));
        spill?.accept(chunk);
      },
      draining: () => spill?.draining === true,
    });
    await spill?.finish();
    deliver("stdout", decoders.stdout.end());
    deliver("stderr", decoders.stderr.end());

    if (callbackError !== undefined) return err(callbackError);
    if (timedOut) return err(withSpillPath(new ExecutionError("timeout", `timeout:${String(timeout)}`), spill?.path));
    if (signal?.aborted) return err(withSpillPath(new ExecutionError("aborted", "aborted"), spill?.path));
    if (spill?.error !== undefined) return err(spill.error);
    const exitCode = exitCodeOf(ending);
    return ok(spill?.path === undefined ? { exitCode } : { exitCode, spillPath: spill.path });
  } finally {
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    if (pid !== undefined) host.activePids.delete(pid);
  }
}

function pipesOf(child: ChildProcess): [Readable, Readable] {
  const { stdout, stderr } = child;
  if (stdout === null || stderr === null) throw new Error("spawn did not create stdout/stderr pipes");
  return [stdout, stderr];
}

interface WaitHooks {
  onChunk(stream: StreamName, chunk: Buffer): void;
  /** True while the spill still needs the command to stay open. */
  draining(): boolean;
}

/**
 * Resolves when the process is done: on `close`; on `exit` once both pipes ended; or 100 ms after exit without
 * output (re-armed by every chunk after exit and while the spill drains). Then both pipes are destroyed, so a
 * descendant holding them cannot keep `exec` open. Rejects on the child's `error` event.
 */
function waitForProcess(child: ChildProcess, pipes: [Readable, Readable], hooks: WaitHooks): Promise<Ending> {
  const [stdout, stderr] = pipes;
  return new Promise<Ending>((resolve, reject) => {
    let finished = false;
    let exited = false;
    let stdoutEnded = false;
    let stderrEnded = false;
    let ending: Ending = { code: null, signal: null };
    let idle: NodeJS.Timeout | undefined;

    const finish = (final: Ending) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      stdout.destroy();
      stderr.destroy();
      resolve(final);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        if (hooks.draining()) armIdle();
        else finish(ending);
      }, EXIT_STDIO_GRACE_MS);
    };
    const listen = (pipe: Readable, stream: StreamName) => {
      pipe.on("data", (chunk: Buffer) => {
        if (finished) return;
        hooks.onChunk(stream, chunk);
        if (exited) armIdle();
      });
      pipe.on("end", () => {
        if (stream === "stdout") stdoutEnded = true;
        else stderrEnded = true;
        if (exited && stdoutEnded && stderrEnded) finish(ending);
      });
      // A read error ends the pipe; without a listener it would crash the host process.
      pipe.on("error", () => {});
    };
    listen(stdout, "stdout");
    listen(stderr, "stderr");
    child.on("exit", (code, signal) => {
      exited = true;
      ending = { code, signal };
      if (stdoutEnded && stderrEnded) finish(ending);
      else armIdle();
    });
    child.on("close", (code, signal) => finish({ code, signal }));
    child.on("error", (error) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      reject(error);
    });
  });
}
