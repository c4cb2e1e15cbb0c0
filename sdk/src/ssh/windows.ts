/**
 * What the bootstrap does differently on a Windows target whose SSH server runs commands with `cmd.exe /c` (Windows
 * OpenSSH's default shell): the cmd probe, the agent's paths (`%USERPROFILE%\.outpost\bin\outpost-<sha256>.exe`,
 * and the same file as SFTP names it) and a launch command line that carries no path at all.
 *
 * No user-controlled text is ever put on a cmd command line: cmd expands `%name%` even inside quotes (and Wine's
 * cmd expands the expansion again), so a profile such as `C:\Users\a%PATH%^&b` could not be quoted safely. The
 * agent is instead started by a path relative to the session's start directory, which the probe checks is the
 * profile directory the agent was verified in.
 */
import { SshError } from "./errors.js";
import { afterMarker } from "./remote-command.js";

const MARKER = "OUTPOST-PROBE";
const CWD_MARKER = "OUTPOST-CWD";

/** The probe as one cmd command line: no quotes, no `%` (variables are read with `set NAME`, which prints them as they are). */
export const CMD_PROBE = `echo ${MARKER}& ver& set PROCESSOR_ARCHITECTURE& set USERPROFILE& echo ${CWD_MARKER}& cd`;

/** What the cmd probe found: the processor architecture and the profile directory. */
export interface CmdProbe {
  machine: string;
  home: string;
}

function variable(lines: readonly string[], name: string): string | undefined {
  const prefix = `${name.toLowerCase()}=`;
  const line = lines.find((text) => text.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length);
}

function sameDirectory(a: string, b: string): boolean {
  const normal = (path: string) => path.replace(/\\+$/, "").toLowerCase();
  return normal(a) === normal(b);
}

/**
 * Reads the cmd probe's output: `undefined` when it is not cmd on Windows answering (another shell, garbled
 * output). Fails with a `platform` {@link SshError} when the session does not start in `%USERPROFILE%` or the
 * profile is not a drive path: the agent would not be started from where it was verified.
 */
export function parseCmdProbe(stdout: string): CmdProbe | undefined {
  const lines = afterMarker(stdout, MARKER)?.map((line) => line.trimEnd());
  if (lines === undefined || !lines.some((line) => /^Microsoft Windows\b/.test(line.trim()))) return undefined;
  const machine = variable(lines, "PROCESSOR_ARCHITECTURE");
  const home = variable(lines, "USERPROFILE");
  const cwd = afterMarker(lines.join("\n"), CWD_MARKER)?.find((line) => line !== "");
  if (machine === undefined || home === undefined || cwd === undefined) return undefined;
  if (!/^[A-Za-z]:\\/.test(home)) {
    throw new SshError("platform", `Unsupported Windows profile directory ${JSON.stringify(home)} (not on a drive)`);
  }
  if (!sameDirectory(home, cwd)) {
    throw new SshError(
      "platform",
      `SSH sessions on this Windows host start in ${JSON.stringify(cwd)}, not in %USERPROFILE% (${JSON.stringify(home)})`,
    );
  }
  return { machine, home: home.replace(/\\+$/, "") };
}

/** Where the agent with `sha256` lives under the profile `home`, relative to it, and as SFTP names it. */
export interface WindowsAgentPaths {
  /** `C:\Users\me\.outpost\bin\outpost-<sha256>.exe`. */
  path: string;
  /** `.outpost\bin\outpost-<sha256>.exe`: what the launch command runs (sessions start in the profile). */
  relative: string;
  /** `/C:/Users/me/.outpost/bin/outpost-<sha256>.exe`, the form Windows OpenSSH's sftp-server takes. */
  sftp: string;
}

/** The agent's paths on a Windows target whose profile directory is `home` (a drive path). */
export function windowsAgentPaths(home: string, sha256: string): WindowsAgentPaths {
  const relative = `.outpost\\bin\\outpost-${sha256}.exe`;
  const path = `${home}\\${relative}`;
  return { path, relative, sftp: `/${path.replace(/\\/g, "/")}` };
}

/**
 * The cmd command line that starts the verified agent: the variables `unset` removed (`set NAME=` with nothing
 * after the `=` deletes a variable), then the agent by its relative path. Every word is checked to be plain
 * (letters, digits, `-`, `_`, `.`), so nothing on the line means anything to cmd but the `&` between commands.
 */
export function windowsLaunchCommand(
  paths: WindowsAgentPaths,
  args: readonly string[],
  unset: readonly string[],
): string {
  for (const word of [...args, ...unset]) {
    if (!/^[A-Za-z0-9_.-]+$/.test(word)) {
      throw new SshError("invalid", `Cannot pass ${JSON.stringify(word)} to the agent through cmd.exe`);
    }
  }
  const removals = unset.map((name) => `set ${name}=& `).join("");
  return `${removals}${[paths.relative, ...args].join(" ")}`;
}
