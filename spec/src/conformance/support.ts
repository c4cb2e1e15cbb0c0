/**
 * Helpers shared by the case modules: contexts, Result assertions and shell helpers that prepare files the
 * `ExecutionEnv` API cannot create (FIFOs, symbolic links, names that are not UTF-8).
 */
import assert from "node:assert/strict";
import { posix, win32 } from "node:path";
import type { Context, ExecutionEnv, ExecutionError, FileError, Result, ShellExecOptions } from "@outpost/sdk";
import type { Setup } from "./types.js";

/** A context that never aborts. */
export const live: Context = { abortSignal: undefined };

/** A context whose signal is already aborted. */
export function aborted(): Context {
  return { abortSignal: AbortSignal.abort() };
}

/** A context aborted by `controller.abort()`. */
export function abortable(): { context: Context; controller: AbortController } {
  const controller = new AbortController();
  return { context: { abortSignal: controller.signal }, controller };
}

/** Returns the value of a successful result; fails with the error otherwise. */
export function value<T>(result: Result<T, FileError | ExecutionError>, what: string): T {
  if (!result.ok) {
    const error = result.error as FileError & { path?: string };
    assert.fail(`${what}: expected success, got ${error.code} "${error.message}" (path ${String(error.path)})`);
  }
  return result.value;
}

/** Asserts a failed file result with `code` and, when given, exactly `path` (`undefined` included). */
export function fails<T>(
  result: Result<T, FileError>,
  code: FileError["code"],
  what: string,
  path?: string | { none: true },
): FileError {
  if (result.ok) assert.fail(`${what}: expected ${code}, got success ${describe(result.value)}`);
  const error = result.error;
  assert.equal(error.code, code, `${what}: code (message "${error.message}", path ${String(error.path)})`);
  assert.equal(error.name, "FileError", `${what}: error name`);
  assert.ok(error instanceof Error, `${what}: the error is an Error`);
  if (typeof path === "string") assert.equal(error.path, path, `${what}: path`);
  else if (path !== undefined) assert.equal(error.path, undefined, `${what}: no path`);
  return error;
}

/** Asserts a failed exec result with `code` and, when given, exactly `message`. */
export function execFails<T>(
  result: Result<T, ExecutionError>,
  code: ExecutionError["code"],
  what: string,
  message?: string,
): ExecutionError {
  if (!result.ok) {
    assert.equal(result.error.code, code, `${what}: code (message "${result.error.message}")`);
    assert.equal(result.error.name, "ExecutionError", `${what}: error name`);
    if (message !== undefined) assert.equal(result.error.message, message, `${what}: message`);
    return result.error;
  }
  return assert.fail(`${what}: expected ${code}, got success ${describe(result.value)}`);
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Output of a command, split by stream, plus every chunk as delivered. */
export interface Captured {
  exitCode: number | undefined;
  spillPath: string | undefined;
  stdout: string;
  stderr: string;
  chunks: { text: string; stream: string; skipped?: { bytes: number; newlines: number; endsWithNewline: boolean } }[];
  result: Result<{ exitCode: number; spillPath?: string }, ExecutionError>;
}

/** Runs a command and collects what `onOutput` delivers. */
export async function run(
  env: ExecutionEnv,
  command: string | readonly string[],
  options: Omit<ShellExecOptions, "onOutput"> = {},
  context: Context = live,
): Promise<Captured> {
  const captured: Captured = {
    exitCode: undefined,
    spillPath: undefined,
    stdout: "",
    stderr: "",
    chunks: [],
    result: { ok: true, value: { exitCode: -1 } },
  };
  const result = await env.exec(
    command,
    {
      ...options,
      onOutput: (text, _context, info) => {
        captured.chunks.push({ text, stream: info.stream, ...(info.skipped ? { skipped: info.skipped } : {}) });
        if (info.stream === "stdout") captured.stdout += text;
        else captured.stderr += text;
      },
    },
    context,
  );
  captured.result = result;
  if (result.ok) {
    captured.exitCode = result.value.exitCode;
    captured.spillPath = result.value.spillPath;
  }
  return captured;
}

/** Runs a POSIX script through the target's shell as an argv command; fails unless it exits 0. */
export async function script(
  setup: Setup,
  env: ExecutionEnv,
  text: string,
  options: Omit<ShellExecOptions, "onOutput"> = {},
): Promise<string> {
  const out = await run(env, [setup.shell[0], setup.shell[1], text], options);
  value(out.result, `helper script ${JSON.stringify(text)}`);
  assert.equal(out.exitCode, 0, `helper script ${JSON.stringify(text)} failed: ${out.stderr}`);
  return out.stdout;
}

/**
 * The code of a path below a file (`f.txt/x`): `not_directory` from ENOTDIR on POSIX; Windows reports "path not
 * found", which libuv translates to ENOENT (WIN2).
 */
export function belowFile(setup: Setup): "not_directory" | "not_found" {
  return setup.windows ? "not_found" : "not_directory";
}

/**
 * The path a recursive directory creation reports when a file is in the way (`createDir("f.txt/x/y")`, or the
 * parents of `writeFile("f.txt/x/y")`): POSIX's mkdir names the path it was creating; Node's recursive mkdir on
 * Windows names the file in the way (WIN2).
 */
export function fileInTheWay(setup: Setup, env: ExecutionEnv, file: string, creating: string): string {
  return setup.windows ? at(env, file) : at(env, creating);
}

/** The `node:path` flavour of an absolute path: a drive letter means Windows. */
export function styleOf(path: string): typeof posix {
  return /^[A-Za-z]:[\\/]/.test(path) ? win32 : posix;
}

/** Absolute path of `name` inside the env's cwd, in the cwd's own style. */
export function at(env: ExecutionEnv, ...names: string[]): string {
  return styleOf(env.cwd).join(env.cwd, ...names);
}

/** Writes a file through the env, failing the case on error. */
export async function put(env: ExecutionEnv, path: string, content: string | Uint8Array): Promise<void> {
  value(await env.writeFile(path, content, live), `writeFile ${path}`);
}

/** Reads a file's bytes through the env, failing the case on error. */
export async function bytes(env: ExecutionEnv, path: string): Promise<Uint8Array> {
  return value(await env.readBinaryFile(path, live), `readBinaryFile ${path}`);
}

/** Reads a file as text through the env, failing the case on error. */
export async function text(env: ExecutionEnv, path: string): Promise<string> {
  return value(await env.readTextFile(path, live), `readTextFile ${path}`);
}

/** Whether something exists at the path (through the env). */
export async function present(env: ExecutionEnv, path: string): Promise<boolean> {
  return value(await env.exists(path, live), `exists ${path}`);
}

/** Hex of bytes, for readable byte comparisons. */
export function hex(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("hex");
}

/** Bytes from hex. */
export function unhex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.replace(/\s+/g, ""), "hex"));
}

/** Sleeps. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Single-quotes a string for a POSIX shell. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Sorted names of a listing. */
export function names(entries: readonly { name: string }[]): string[] {
  return entries.map((entry) => entry.name).sort();
}

export { assert };
