/**
 * `exec` and `sh`: a command on the target with its output streamed as it comes, the remote exit code passed
 * through, and Ctrl-C (SIGINT) or the reader of stdout going away (EPIPE) aborting the remote command.
 */

import { EXIT, errorLine, failed } from "../exit.js";
import { outputClosed } from "../output.js";
import type { Session } from "../target.js";

/** Runs `command` (an argv, or a string for the target's shell) and returns the exit code the CLI should use. */
export async function runCommand(session: Session, command: string | readonly string[]): Promise<number> {
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  try {
    const result = await session.env.exec(
      command,
      {
        onOutput: (text, _context, info) => {
          if (info.stream === "stderr") process.stderr.write(text);
          else if (!outputClosed.aborted) process.stdout.write(text);
        },
      },
      { abortSignal: AbortSignal.any([controller.signal, outputClosed]) },
    );
    if (result.ok) return result.value.exitCode;
    // The reader went away: the command was aborted for that, and the CLI ends quietly (main.ts).
    if (outputClosed.aborted) return EXIT.failure;
    // On a terminal Ctrl-C also reaches a local agent (same process group), so the call may end as a lost
    // connection rather than `aborted`; either way the command was interrupted, and the agent killed it.
    if (controller.signal.aborted) {
      process.stderr.write(errorLine("command: interrupted", "aborted"));
      return EXIT.interrupted;
    }
    const failure = failed("command", result.error);
    process.stderr.write(errorLine(failure.message, failure.code));
    return failure.exitCode;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}
