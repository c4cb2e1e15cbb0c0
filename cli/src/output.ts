/**
 * Standard output as a Unix tool treats it. When the reader goes away (`outpost ls … | head -1`) writes fail with
 * EPIPE: the CLI then stops its work (a running remote command is aborted, a listing or watch ends), prints nothing
 * more and dies of SIGPIPE like `seq`, `cat` or `grep`, so the shell sees status 141 (docs/cli.md). Any other write
 * error (a full disk behind `>`) also stops the work and is reported as a failure.
 */

const stop = new AbortController();
let failure: NodeJS.ErrnoException | undefined;

/** Aborted once stdout cannot be written any more; commands pass it to every call that can be aborted. */
export const outputClosed: AbortSignal = stop.signal;

/** Whether the reader of stdout went away (EPIPE). */
export function readerGone(): boolean {
  return failure?.code === "EPIPE";
}

/** A write error on stdout other than EPIPE, if one happened. */
export function outputFailure(): NodeJS.ErrnoException | undefined {
  return readerGone() ? undefined : failure;
}

/**
 * Catches stdout's and stderr's write errors, which Node would otherwise throw as an unhandled 'error' event with a
 * stack trace. Call once before any output.
 */
export function watchOutput(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    // Writes after the first failure fail too (the stream is destroyed); the first one says why.
    if (failure !== undefined) return;
    failure = error;
    stop.abort(error);
  });
  // Nowhere is left to report a failure to write stderr; a closed stderr must not crash the command either.
  process.stderr.on("error", () => {});
}

/**
 * Ends this process as a Unix tool whose reader went away: by SIGPIPE's default action. Node ignores SIGPIPE; adding
 * and removing a listener makes libuv restore the default disposition, so the signal sent to ourselves kills the
 * process. If it still runs a moment later, it exits with the shell's status for that death, 128 + 13.
 */
export function dieOfSigpipe(): void {
  const ignore = () => {};
  process.on("SIGPIPE", ignore);
  process.off("SIGPIPE", ignore);
  process.kill(process.pid, "SIGPIPE");
  setTimeout(() => process.exit(141), 1000);
}
