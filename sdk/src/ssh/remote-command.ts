/** Running a short bootstrap command on the remote through the account's shell, and quoting for that shell. */
import type { Client, ClientChannel } from "ssh2";
import { SshError } from "./errors.js";
import { ssh2Call } from "./ssh2-call.js";

/** A POSIX shell word for `value`: single-quoted, an embedded `'` written as `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

/** What a finished remote command printed and how it exited (`code` is null when killed by a signal). */
export interface RemoteOutput {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Writes a remote command's input and ends it. */
export type RemoteInput = (stdin: NodeJS.WritableStream) => void;

/** How long a bootstrap command may take; an upload gets {@link UPLOAD_TIMEOUT_MS}. */
export const COMMAND_TIMEOUT_MS = 60_000;
export const UPLOAD_TIMEOUT_MS = 300_000;

/**
 * Runs `command` (a string the account's login shell interprets, as with `ssh host command`) and collects its
 * output; `input` writes its stdin (none: ended at once). Fails with a `remote` {@link SshError} if the channel
 * cannot be opened, the connection drops or the command takes longer than the timeout.
 *
 * @internal ssh2's types stay out of the published declarations (stripInternal): this file's declarations are
 * reached from the public `deployAgent` types, and a host that never asked for `@types/ssh2` must compile them.
 */
export function runRemote(
  client: Client,
  command: string,
  input?: RemoteInput,
  timeoutMs = input === undefined ? COMMAND_TIMEOUT_MS : UPLOAD_TIMEOUT_MS,
): Promise<RemoteOutput> {
  return retryRefusedExec(() =>
    ssh2Call(
      (done: (error: Error | undefined, channel: ClientChannel) => void) => client.exec(command, done),
      (error) => new SshError("remote", `Cannot run a command over SSH: ${error.message}`, error),
      // In the callback itself: the command's exit and close may follow in the same turn.
      (channel) => collectOutput(channel, input, timeoutMs),
    ),
  );
}

/** ssh2's error when the server answers an exec request with a failure. */
function isRefusedExec(error: unknown): boolean {
  return error instanceof SshError && error.cause instanceof Error && error.cause.message === "Unable to exec";
}

const EXEC_RETRIES = 3;

/**
 * Runs `attempt` (an exec request), again after a pause when the server refused the request itself. Dropbear
 * (2022.83) now and then refuses an exec on a connection whose earlier session has just ended (measured: one
 * refusal within 1 to 115 envs opened and closed in turn on one connection); the command never started, so sending
 * it again is safe, and the next request succeeds. At most {@link EXEC_RETRIES} more tries, 100 ms, 200 ms, 400 ms
 * apart.
 */
export async function retryRefusedExec<T>(attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (retry >= EXEC_RETRIES || !isRefusedExec(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** retry));
    }
  }
}

/** What a started command prints until its channel closes, after `input` wrote its stdin. */
function collectOutput(
  channel: ClientChannel,
  input: RemoteInput | undefined,
  timeoutMs: number,
): Promise<RemoteOutput> {
  return new Promise((resolve, reject) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let code: number | null = null;
    let exited = false;
    const timer = setTimeout(() => {
      channel.close();
      reject(new SshError("remote", `A remote command did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    channel.on("data", (chunk: Buffer) => stdout.push(chunk));
    channel.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    channel.on("exit", (exitCode: number | null) => {
      exited = true;
      code = exitCode; // null after an exit signal
    });
    channel.on("close", () => {
      clearTimeout(timer);
      const output = {
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        code,
      };
      // A channel closed without an exit status: the connection dropped (or the server broke the protocol).
      if (!exited) reject(new SshError("remote", "The SSH connection dropped while a remote command ran"));
      else resolve(output);
    });
    if (input === undefined) channel.end();
    else input(channel);
  });
}

/** The lines after the last line equal to `marker`, or `undefined` when the marker never came. */
export function afterMarker(text: string, marker: string): string[] | undefined {
  const lines = text.split(/\r?\n/);
  const index = lines.lastIndexOf(marker);
  return index < 0 ? undefined : lines.slice(index + 1);
}

/**
 * Runs `work` but fails as soon as the SSH connection closes: a request in flight on a dropped connection (an SFTP
 * write, for one) may otherwise never call back.
 *
 * @internal ssh2's types stay out of the published declarations (stripInternal): this file's declarations are
 * reached from the public `deployAgent` types, and a host that never asked for `@types/ssh2` must compile them.
 */
export function whileConnected<T>(client: Client, work: Promise<T>): Promise<T> {
  let onClose: (() => void) | undefined;
  const closed = new Promise<never>((_, reject) => {
    onClose = () => reject(new SshError("remote", "The SSH connection dropped"));
    client.once("close", onClose);
  });
  return Promise.race([work, closed]).finally(() => client.removeListener("close", onClose!));
}
