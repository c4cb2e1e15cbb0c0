/**
 * The CLI's exit codes and how failures become them: 0 ok, 1 a failure, 2 a usage error; `exec` and `sh` exit with
 * the remote command's own code instead. Every failure is one stderr line `outpost: <message> [<code>]`, the code
 * being the SDK's (`not_found`, `auth`, …) or `usage` (docs/cli.md lists them).
 */
import { type ExecutionError, type FileError, type FileErrorCode, HostKeyChangedError, SshError } from "@outpost/sdk";

/** Exit codes of every command (docs/cli.md lists them). */
export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/** The status of a failure (`EXIT.failure` unless the command changed it: grep's 1 means "no match", so it fails 2). */
let failureStatus: number = EXIT.failure;

/** Makes every failure of this run exit with `status` instead of 1 (usage errors and interruptions keep theirs). */
export function failuresExitWith(status: number): void {
  failureStatus = status;
}

/** The exit status of a failure of this run that carries `EXIT.failure`. */
export function failureExit(exitCode: number): number {
  return exitCode === EXIT.failure ? failureStatus : exitCode;
}

/** A failure the CLI reports with a message, a code and an exit status, thrown out of a command's action. */
export class CliFailure extends Error {
  readonly code: string;
  readonly exitCode: number;

  constructor(message: string, code: string, exitCode: number = EXIT.failure) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** The stderr line of a failure. */
export function errorLine(message: string, code: string): string {
  return `outpost: ${message} [${code}]\n`;
}

/** A usage error (exit 2), for arguments commander itself cannot check. */
export function usage(message: string): CliFailure {
  return new CliFailure(message, "usage", EXIT.usage);
}

/** A failed SDK call as a CLI failure, with a plain message for a feature the agent lacks. */
export function failed(what: string, error: FileError | ExecutionError | SshError): CliFailure {
  if (error.code === "not_supported") {
    return new CliFailure(
      `${what}: ${error.message}; this agent is older than the feature (\`outpost deploy\` a newer one)`,
      error.code,
    );
  }
  if (error.code === "aborted") return new CliFailure(`${what}: interrupted`, error.code, EXIT.interrupted);
  return new CliFailure(`${what}: ${error.message}`, error.code);
}

/**
 * A failed SSH step on `target` as a CLI failure; host-key failures say which `outpost hosts` command comes next
 * (the SDK's own text names its functions, e.g. `forgetHostKey`).
 */
export function sshFailed(what: string, target: string, error: SshError): CliFailure {
  if (error instanceof HostKeyChangedError) {
    return new CliFailure(
      `${what}: the host key of ${error.host} changed: trusted ${error.keyType} ${error.knownFingerprints.join(", ")}, ` +
        `presented ${error.fingerprint}. Someone may be intercepting the connection; only after checking the new ` +
        `key out of band, run \`outpost hosts forget ${target}\`, then \`outpost hosts accept ${target} ` +
        `--fingerprint ${error.fingerprint}\``,
      error.code,
    );
  }
  if (error.code === "host_key_unknown") {
    return new CliFailure(
      `${what}: ${error.message} (run \`outpost hosts scan ${target}\`, then \`outpost hosts accept\`)`,
      error.code,
    );
  }
  return failed(what, error);
}

/** The code of a local file failure (a Node error), named as the SDK names file errors. */
export function localFileCode(error: unknown): FileErrorCode {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "not_found";
  if (code === "EACCES" || code === "EPERM") return "permission_denied";
  if (code === "EISDIR") return "is_directory";
  if (code === "ENOTDIR") return "not_directory";
  return "unknown";
}

/** Anything a command threw, as a CLI failure. */
export function asFailure(error: unknown): CliFailure {
  if (error instanceof CliFailure) return error;
  if (error instanceof SshError) return failed("ssh", error);
  return new CliFailure(error instanceof Error ? error.message : String(error), "unknown");
}
