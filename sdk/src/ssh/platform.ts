/**
 * `detectPlatform`: which of the `make dist` targets the remote needs, found by a probe that survives login-shell
 * noise (whatever the account's shell startup files print comes before the probe's marker line and is skipped).
 */
import { SshError } from "./errors.js";
import type { RemoteAccess } from "./remote-access.js";
import { afterMarker } from "./remote-command.js";
import { printMarker, runScript } from "./remote-script.js";
import { CMD_PROBE, parseCmdProbe } from "./windows.js";

/** The remote system as far as deployment cares. */
export interface RemotePlatform {
  /** `linux`, `darwin`, `windows` or `android`: the SDK's platform names. */
  platform: "linux" | "darwin" | "windows" | "android";
  /** `x64` or `arm64`. */
  arch: "x64" | "arm64";
  /** The account's home directory on the remote (`$HOME`, `%USERPROFILE%`, or PowerShell's `$HOME`). */
  home: string;
  /**
   * What the SSH server runs commands with: `posix` (a POSIX shell, also Git Bash or Cygwin on Windows), `cmd`
   * (`cmd.exe /c`, Windows OpenSSH's default) or `powershell` (a PowerShell `DefaultShell`). The agent is deployed
   * through `posix` and, on Windows, `cmd`.
   */
  shell: "posix" | "cmd" | "powershell";
}

const MARKER = "OUTPOST-PROBE";
const POSIX_PROBE = `${printMarker(MARKER)}; uname -s; uname -m; uname -o 2>/dev/null || echo -; printf '%s\\n' "$HOME"`;
const WINDOWS_PROBE = [
  `Write-Output '${MARKER}'`,
  "Write-Output 'Windows'",
  "Write-Output ([System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture.ToString())",
  "Write-Output '-'",
  "Write-Output $HOME",
].join("; ");

function mapArch(raw: string): RemotePlatform["arch"] {
  const arch = raw.trim().toLowerCase();
  if (arch === "x86_64" || arch === "amd64" || arch === "x64") return "x64";
  if (arch === "aarch64" || arch === "arm64") return "arm64";
  throw new SshError("platform", `Unsupported remote architecture: ${JSON.stringify(raw.trim())}`);
}

/** The POSIX probe's four lines: `uname -s`, `uname -m`, `uname -o` (or `-`), `$HOME`. */
export interface Probe {
  system: string;
  machine: string;
  os: string;
  home: string;
}

function parseProbe(stdout: string): Probe | undefined {
  const lines = afterMarker(stdout, MARKER);
  return lines === undefined ? undefined : probeOf(lines);
}

/** The probe in its first four lines, trimmed; `undefined` when one is missing or blank. */
export function probeOf(lines: readonly string[]): Probe | undefined {
  if (lines.length < 4) return undefined;
  const [system, machine, os, home] = lines.slice(0, 4).map((line) => line.trim());
  if (system === "" || machine === "" || home === "") return undefined;
  return { system, machine, os, home };
}

/** Git Bash or Cygwin on Windows: Windows' own facts come from PowerShell. */
export function isWindowsPosix(probe: Probe): boolean {
  return /^(MINGW|MSYS|CYGWIN)/i.test(probe.system);
}

/** A POSIX system's platform from its probe; a `platform` {@link SshError} for an unsupported one. */
export function posixPlatform(probe: Probe): RemotePlatform {
  const arch = mapArch(probe.machine);
  const shell = "posix";
  if (probe.system === "Darwin") return { platform: "darwin", arch, home: probe.home, shell };
  if (probe.system === "Linux")
    return { platform: probe.os === "Android" ? "android" : "linux", arch, home: probe.home, shell };
  throw new SshError("platform", `Unsupported remote system: ${JSON.stringify(probe.system)}`);
}

/** Windows' facts from PowerShell (the shell is the caller's to say). */
async function windowsProbe(remote: RemoteAccess): Promise<Omit<RemotePlatform, "shell"> | undefined> {
  const encoded = Buffer.from(WINDOWS_PROBE, "utf16le").toString("base64");
  const output = await remote.run(`powershell -NoProfile -NonInteractive -EncodedCommand ${encoded}`);
  const probe = parseProbe(output.stdout);
  if (probe === undefined || probe.system !== "Windows") return undefined;
  return { platform: "windows", arch: mapArch(probe.machine), home: probe.home };
}

/** Windows OpenSSH's default: commands run with `cmd.exe /c`. */
async function cmdProbe(remote: RemoteAccess): Promise<RemotePlatform | undefined> {
  const found = parseCmdProbe((await remote.run(CMD_PROBE)).stdout);
  if (found === undefined) return undefined;
  return { platform: "windows", arch: mapArch(found.machine), home: found.home, shell: "cmd" };
}

/**
 * Identifies the remote system: a POSIX shell first, then cmd, then PowerShell. Fails with a `platform`
 * {@link SshError} for a garbled probe or an unsupported system.
 */
export async function detectPlatformOn(remote: RemoteAccess): Promise<RemotePlatform> {
  const posix = await runScript(remote, POSIX_PROBE, []);
  const probe = parseProbe(posix.stdout);
  if (probe === undefined) {
    const viaCmd = await cmdProbe(remote);
    if (viaCmd !== undefined) return viaCmd;
    const viaPowershell = await windowsProbe(remote).catch(() => undefined);
    if (viaPowershell !== undefined) return { ...viaPowershell, shell: "powershell" };
    const shown = `${posix.stdout}${posix.stderr}`.trim().slice(-400);
    throw new SshError("platform", `Cannot identify the remote system: the probe printed ${JSON.stringify(shown)}`);
  }
  if (isWindowsPosix(probe)) {
    const windows = await windowsProbe(remote).catch(() => undefined);
    if (windows !== undefined) return { ...windows, shell: "posix" };
  }
  return posixPlatform(probe);
}
