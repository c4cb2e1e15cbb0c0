/**
 * POSIX scripts run on the remote whatever the account's login shell is (sh, bash, zsh, fish, tcsh…) and whatever
 * its startup files print (spec/semantics.md SSH6).
 *
 * The command line the login shell interprets is always the same {@link SCRIPT_COMMAND}: one single-quoted word
 * with no `'`, `\`, `!` or newline in it, which every one of those shells reads the same way. It starts `sh`, which
 * reads one line from stdin and evaluates it: the script, with its arguments quoted for `sh` itself. `sh`'s `read`
 * takes its input byte by byte, so whatever follows the line on stdin (an uploaded file, the agent's requests) is
 * left for the script. Output a script reports starts with an empty line and a marker line, so text a startup file
 * printed without a final newline never hides the marker.
 */
import { createReadStream, type ReadStream } from "node:fs";
import { SshError } from "./errors.js";
import type { RemoteAccess } from "./remote-access.js";
import {
  afterMarker,
  COMMAND_TIMEOUT_MS,
  type RemoteInput,
  type RemoteOutput,
  shellQuote,
  UPLOAD_TIMEOUT_MS,
} from "./remote-command.js";

/** The command every script runs under: `sh` reads the script's line from stdin and evaluates it. */
export const SCRIPT_COMMAND = `sh -c 'IFS= read -r s && eval "$s"'`;

/** The stdin line that runs `script` (one line of POSIX sh) with `args` as `$1…`. */
export function scriptLine(script: string, args: readonly string[]): string {
  if (/[\r\n]/.test(script)) throw new Error("A remote script must be one line");
  return `set -- ${args.map(shellQuote).join(" ")}; ${script}\n`;
}

/** A POSIX `sh` command that prints an empty line, then `marker` on a line of its own. */
export function printMarker(marker: string): string {
  return `printf '\\n%s\\n' ${marker}`;
}

/** A local file sent on the script's stdin after its line, reporting bytes sent. */
export interface ScriptData {
  path: string;
  size: number;
  onProgress?: (sent: number, total: number) => void;
}

/** Writes the script's line, then the file if any, then ends stdin. */
export function scriptStdin(line: string, data?: ScriptData): RemoteInput {
  return (stdin) => {
    stdin.on("error", () => {}); // A script that exits early closes its input: its output says what happened.
    if (data === undefined) {
      stdin.end(line);
      return;
    }
    stdin.write(line);
    sendScriptData(stdin, data, true).on("error", (error) => stdin.emit("error", error));
  };
}

/**
 * Pipes the file `data` into `stdin` after the script's line, reporting progress; `end` closes stdin after it (an
 * upload read to its end), else stdin stays open for what follows (the agent started by the same script). Its read
 * errors are the caller's to handle, on the returned stream.
 */
export function sendScriptData(stdin: NodeJS.WritableStream, data: ScriptData, end: boolean): ReadStream {
  let sent = 0;
  const file = createReadStream(data.path);
  file.on("data", (chunk) => {
    sent += chunk.length;
    data.onProgress?.(sent, data.size);
  });
  file.pipe(stdin, { end });
  return file;
}

/** Runs `script` with `args` (and `data` on its stdin) through {@link SCRIPT_COMMAND}. */
export function runScript(
  remote: RemoteAccess,
  script: string,
  args: readonly string[],
  data?: ScriptData,
): Promise<RemoteOutput> {
  const timeout = data === undefined ? COMMAND_TIMEOUT_MS : UPLOAD_TIMEOUT_MS;
  return remote.run(SCRIPT_COMMAND, scriptStdin(scriptLine(script, args), data), timeout);
}

/** The non-blank lines a script printed after its marker; a `deploy` {@link SshError} when the marker never came. */
export function reportedLines(output: RemoteOutput, marker: string, what: string): string[] {
  const lines = afterMarker(output.stdout, marker);
  if (lines === undefined) {
    const shown = `${output.stdout}${output.stderr}`.trim().slice(-300);
    throw new SshError("deploy", `${what}: the remote script did not run (it printed ${JSON.stringify(shown)})`);
  }
  return lines.map((line) => line.trim()).filter((line) => line !== "");
}
