/**
 * The CLI's exit codes and how failures become them: 0 ok, 1 a failure (printed to stderr), 2 a usage error;
 * `exec` and `sh` exit with the remote command's own code instead.
 */
import type { ExecutionError, FileError, SshError } from "@outpost/sdk";

/** Exit codes of every command (README "CLI" lists them). */
export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/** A failure the CLI reports with a message and an exit code, thrown out of a command's action. */
export class CliFailure extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A usage error (exit 2), for arguments commander itself cannot check. */
export function usage(message: string): CliFailure {
  return new CliFailure(message, EXIT.usage);
}

/** A failed SDK call as a CLI failure, with a plain message for a feature the agent lacks. */
export function failed(what: string, error: FileError | ExecutionError | SshError): CliFailure {
  if (error.code === "not_supported") {
    return new CliFailure(
      `${what}: ${error.message}; this agent is older than the feature (\`outpost deploy\` a newer one)`,
    );
  }
  if (error.code === "aborted") return new CliFailure(`${what}: interrupted`, EXIT.interrupted);
  return new CliFailure(`${what}: ${error.message} [${error.code}]`);
}
