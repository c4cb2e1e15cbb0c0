/**
 * `exec` and `sh`: a command on the target with its output streamed as it comes, the remote exit code passed
 * through, and Ctrl-C (SIGINT) aborting the remote command.
 */

import { EXIT, failed } from "../exit.js";
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
        onOutput: (text, _context, info) => (info.stream === "stderr" ? process.stderr : process.stdout).write(text),
      },
      { abortSignal: controller.signal },
    );
    if (result.ok) return result.value.exitCode;
    // On a terminal Ctrl-C also reaches a local agent (same process group), so the call may end as a lost
    // connection rather than `aborted`; either way the command was interrupted, and the agent killed it.
    if (controller.signal.aborted) {
      process.stderr.write("outpost: command: interrupted\n");
      return EXIT.interrupted;
    }
    const failure = failed("command", result.error);
    process.stderr.write(`outpost: ${failure.message}\n`);
    return failure.exitCode;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}
