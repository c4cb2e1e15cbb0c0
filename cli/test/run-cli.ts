/**
 * Runs the built `outpost` command (cli/bin/outpost.mjs, which loads cli/dist) as a child process, as a person's
 * shell would: stdin, stdout and stderr are pipes, so the CLI sees no terminal.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The CLI's entry point. */
export const BIN = fileURLToPath(new URL("../bin/outpost.mjs", import.meta.url));
const DIST = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/** What a finished run printed and how it exited. */
export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running CLI whose output is collected as it comes. */
export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout (or stderr) contains `text`; rejects after `ms`. */
  waitFor(text: string, stream?: "stdout" | "stderr", ms?: number): Promise<void>;
  done: Promise<Finished>;
}

/** Starts `outpost <args>` with `env` layered over this process's environment. */
export function start(args: readonly string[], env: Record<string, string | undefined> = {}, input?: string): Running {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`make build\``);
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: "pipe" });
  let out = "";
  let errText = "";
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    errText += chunk;
    wake();
  });
  child.stdin.end(input);
  const done = new Promise<Finished>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout: out, stderr: errText }));
  });
  const waitFor = (text: string, stream: "stdout" | "stderr" = "stdout", ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`no ${JSON.stringify(text)} on ${stream} in ${ms} ms; stdout ${out}; stderr ${errText}`)),
        ms,
      );
      const check = () => {
        if ((stream === "stdout" ? out : errText).includes(text)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return { child, stdout: () => out, stderr: () => errText, waitFor, done };
}

/** Runs `outpost <args>` to the end. */
export function run(args: readonly string[], env: Record<string, string | undefined> = {}, input?: string) {
  return start(args, env, input).done;
}

/** How long a pipeline may run before both processes are killed (SIGKILL, which the test then sees). */
const PIPE_LIMIT_MS = 20_000;

/** What a pipeline `outpost <args> | head <headArgs>` did: head's output and how the CLI ended. */
export interface Piped {
  head: string;
  cli: Finished;
}

/**
 * Runs `outpost <args> | head <headArgs>` with a real pipe between the two processes, as a shell would: head's
 * stdin is an OS pipe whose write end is the CLI's stdout (this process closes its own copy), so when head exits
 * the CLI's next write fails with EPIPE. `meanwhile` runs alongside, e.g. to make a watched directory change.
 * Both are killed after 20 s, so a CLI that does not end fails the test (signal SIGKILL) instead of outliving it.
 */
export async function pipeIntoHead(
  args: readonly string[],
  headArgs: readonly string[],
  env: Record<string, string | undefined> = {},
  meanwhile?: (cli: { stderr(): string; ended(): boolean }) => Promise<void>,
): Promise<Piped> {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`make build\``);
  const head = spawn("head", headArgs, { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    head.once("spawn", resolve);
    head.once("error", (error) => reject(new Error(`cannot run head (coreutils): ${error.message}`)));
  });
  const headIn = head.stdin;
  if (headIn === null) throw new Error("head has no stdin pipe");
  const cli = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", headIn, "pipe"],
  });
  headIn.destroy();
  let headOut = "";
  head.stdout?.setEncoding("utf8").on("data", (chunk: string) => (headOut += chunk));
  let errText = "";
  cli.stderr?.setEncoding("utf8").on("data", (chunk: string) => (errText += chunk));
  // A CLI that never notices its reader left must fail the test, not outlive it.
  const limit = setTimeout(() => {
    cli.kill("SIGKILL");
    head.kill("SIGKILL");
  }, PIPE_LIMIT_MS);
  let ended = false;
  const [finished] = await Promise.all([
    new Promise<Finished>((resolve) =>
      cli.on("close", (code, signal) => {
        ended = true;
        resolve({ code, signal, stdout: "", stderr: errText });
      }),
    ),
    new Promise<void>((resolve) => head.on("close", () => resolve())),
    meanwhile?.({ stderr: () => errText, ended: () => ended }),
  ]).finally(() => {
    clearTimeout(limit);
    // When `meanwhile` failed, the pipeline may still run (after a normal end these do nothing).
    cli.kill("SIGKILL");
    head.kill("SIGKILL");
  });
  return { head: headOut, cli: finished };
}
