/**
 * `deployAgent`: the agent for the remote's platform, uploaded by one POSIX script (remote-script.ts; its bytes on the
 * script's stdin) to `~/.outpost/bin/outpost-<sha256>` (a temporary name, verified, then renamed into place; mode
 * 0755 in a 0700 directory), and verified by its SHA-256 on the remote before every start; after an upload, agents
 * of other versions are removed. No path passes through the account's shell: paths are `sh` arguments on the
 * script's line (spec/semantics.md SSH6). Windows through cmd.exe: `%USERPROFILE%\.outpost\bin\outpost-<sha256>.exe`, hashed here
 * from its bytes read back over SFTP (spec/semantics.md SSH5).
 */
import { type AgentManifest, readManifest } from "../env/agent-binary.js";
import { agentFor, agentPathUnder, agentUploadName, type LocalAgent } from "../env/agent-deploy.js";
import { SshError } from "./errors.js";
import type { RemotePlatform } from "./platform.js";
import type { RemoteAccess, SftpAccess } from "./remote-access.js";
import { afterMarker, type RemoteOutput } from "./remote-command.js";
import { printMarker, reportedLines, runScript } from "./remote-script.js";
import { windowsAgentPaths } from "./windows.js";

export type { LocalAgent } from "../env/agent-deploy.js";

/** Options of deployment. */
export interface DeployOptions {
  /** The agent binary to deploy (default: the SDK's packaged agent for the remote's platform). */
  agentBinary?: string;
  /** Receives upload progress: bytes sent so far and the total. */
  onProgress?: (sent: number, total: number) => void;
}

/** Where the agent was put and whether this call uploaded it. */
export interface DeployedAgent {
  /** The remote path of the verified binary. */
  path: string;
  sha256: string;
  /** `false` when a verified binary was already there. */
  uploaded: boolean;
}

/** The POSIX targets an agent can be packaged for, as the boot script names them (`<platform>-<arch>`). */
const POSIX_TARGETS: readonly Pick<RemotePlatform, "platform" | "arch">[] = [
  { platform: "linux", arch: "x64" },
  { platform: "linux", arch: "arm64" },
  { platform: "darwin", arch: "x64" },
  { platform: "darwin", arch: "arm64" },
  { platform: "android", arch: "arm64" },
  { platform: "android", arch: "x64" },
];

/**
 * The agents a start may run, as `<platform>-<arch>=<sha256>` words for the boot script: `agentBinary` as `any=…`
 * (it is for whatever the target is), else every packaged agent this SDK carries that matches its manifest.
 */
export async function agentTable(options: DeployOptions = {}): Promise<string[]> {
  if (options.agentBinary !== undefined) {
    const agent = await localAgent({ platform: "linux", arch: "x64", home: "/", shell: "posix" }, options);
    return [`any=${agent.sha256}`];
  }
  const words: string[] = [];
  for (const target of POSIX_TARGETS) {
    const agent = await localAgent({ ...target, home: "/", shell: "posix" }, options).catch(() => undefined);
    if (agent !== undefined) words.push(`${target.platform}-${target.arch}=${agent.sha256}`);
  }
  return words;
}

/**
 * The agent for `platform`: `agentBinary` if given; else the SDK's packaged binary (`make dist` for every platform,
 * `make build` for this machine's). Its hash is computed from the bytes themselves; where `bin/manifest.json` lists
 * the platform, the two must agree, so a binary rebuilt or changed after `make dist` is never deployed by mistake.
 * `manifest` reads that manifest (a parameter so tests can give one).
 */
export async function localAgent(
  platform: RemotePlatform,
  options: DeployOptions = {},
  manifest: () => AgentManifest | undefined = readManifest,
): Promise<LocalAgent> {
  try {
    return await agentFor(platform, options.agentBinary, manifest);
  } catch (error) {
    throw new SshError("deploy", (error as Error).message, (error as Error).cause ?? error);
  }
}

const HASH_MARKER = "OUTPOST-HASH";
const INSTALL_MARKER = "OUTPOST-INSTALL";

/** A shell function printing the SHA-256 of the regular file `$1`, `missing`, or `nohash` without a tool. */
export const HASH_FUNCTION = [
  "outpost_hash() {",
  'if [ ! -f "$1" ]; then echo missing;',
  'elif command -v sha256sum >/dev/null 2>&1; then sha256sum < "$1";',
  'elif command -v shasum >/dev/null 2>&1; then shasum -a 256 < "$1";',
  'elif command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 < "$1";',
  "else echo nohash; fi; }",
].join(" ");

const HASH_SCRIPT = `${HASH_FUNCTION}; ${printMarker(HASH_MARKER)}; outpost_hash "$1"`;

/** The hash a hashing tool printed (`undefined` if none), `"missing"`, or a `deploy` error for `nohash`. */
export function parseHash(line: string | undefined): string | undefined {
  if (line === "missing") return "missing";
  if (line === "nohash") {
    throw new SshError("deploy", "The remote has no sha256sum, shasum or openssl to verify the Outpost agent with");
  }
  return line === undefined ? undefined : /\b([0-9a-f]{64})\b/i.exec(line)?.[1]?.toLowerCase();
}

function unreadable(path: string, output: RemoteOutput): SshError {
  const shown = JSON.stringify((output.stdout + output.stderr).trim().slice(-300));
  return new SshError("deploy", `Cannot hash ${path} on the remote: ${shown}`);
}

/** The SHA-256 of a remote file, `"missing"` if there is no such regular file. */
export async function remoteHash(remote: RemoteAccess, path: string): Promise<string> {
  const output = await runScript(remote, HASH_SCRIPT, [path]);
  const line = (afterMarker(output.stdout, HASH_MARKER) ?? []).find((text) => text.trim() !== "")?.trim();
  const hash = parseHash(line);
  if (hash === undefined) throw unreadable(path, output);
  return hash;
}

/** The remote directory and file name the agent with `sha256` lives under. */
export function remoteAgentPath(platform: RemotePlatform, sha256: string): string {
  return agentPathUnder(platform.home, sha256);
}

/**
 * Removes agents of other versions from the agent's directory `$1` (spec/semantics.md SSH2): every
 * `outpost-<sha256>` but the current one (`$4`), the most recently uploaded other one, and any that a process runs
 * (seen in `/proc`; without `/proc` nothing is removed); and upload leftovers (`.outpost-*.tmp`) older than an hour.
 * Best effort, in a subshell: its failure never fails a deployment that worked.
 */
export const CLEANUP = [
  '( d=$(cd "$1" 2>/dev/null && pwd -P) || exit 0; keep="outpost-$4";',
  'cd "$d" || exit 0;',
  "[ -e /proc/self/exe ] || exit 0;",
  "running=$(ls -l /proc/[0-9]*/exe 2>/dev/null | sed -n 's/^.* -> //p');",
  "agents=$(ls -t 2>/dev/null | grep -E -x 'outpost-[0-9a-f]{64}');",
  'previous=$(printf \'%s\\n\' "$agents" | grep -v -x -F -e "$keep" | head -n 1);',
  "for f in $agents; do",
  'if [ "$f" = "$keep" ] || [ "$f" = "$previous" ]; then continue; fi;',
  'if printf \'%s\\n\' "$running" | grep -q -x -F -e "$d/$f"; then continue; fi;',
  'rm -f -- "$f";',
  "done;",
  "find . -maxdepth 1 -name '.outpost-*.tmp' -mmin +60 -exec rm -f {} + ) >/dev/null 2>&1",
].join(" ");

/**
 * The upload, as one script whose stdin carries the binary after the script's line (`$1` the directory, `$2` the
 * temporary name, `$3` the final name, `$4` the SHA-256): creates the directory (0700), writes the temporary file
 * (0755), hashes it, renames it into place only if it verifies, hashes the final name, then cleans up. It reports
 * `write ok|failed`, `temp <hash>` and, after a rename, `final <hash>`.
 */
const INSTALL_SCRIPT = [
  `${HASH_FUNCTION}; umask 077;`,
  'if mkdir -p -- "$1" && chmod 700 -- "$1" && cat > "$2" && chmod 755 -- "$2"; then w=ok;',
  'else w=failed; rm -f -- "$2"; cat > /dev/null; fi;',
  `${printMarker(INSTALL_MARKER)}; echo "write $w"; [ "$w" = ok ] || exit 1;`,
  'u=$(outpost_hash "$2"); echo "temp $u";',
  'case "$u" in *"$4"*) mv -f -- "$2" "$3" && echo "final $(outpost_hash "$3")";; *) rm -f -- "$2"; exit 1;; esac;',
  `${CLEANUP}; exit 0`,
].join(" ");

/** Uploads the agent for `platform` (known to be missing or wrong there) and verifies it; one remote command. */
export async function installAgent(
  remote: RemoteAccess,
  platform: RemotePlatform,
  options: DeployOptions = {},
): Promise<DeployedAgent> {
  const agent = await localAgent(platform, options);
  const path = remoteAgentPath(platform, agent.sha256);
  await install(remote, agent, path, options);
  return { path, sha256: agent.sha256, uploaded: true };
}

/** Uploads the agent under a unique temporary name and moves it to `finalPath` only once it verified there. */
async function install(remote: RemoteAccess, agent: LocalAgent, finalPath: string, options: DeployOptions) {
  const dir = finalPath.slice(0, finalPath.lastIndexOf("/"));
  const temp = agentUploadName(dir, agent.sha256);
  const data = { path: agent.path, size: agent.size, onProgress: options.onProgress };
  const output = await runScript(remote, INSTALL_SCRIPT, [dir, temp, finalPath, agent.sha256], data);
  const lines = reportedLines(output, INSTALL_MARKER, `Cannot upload the agent to ${temp}`);
  const field = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.slice(name.length + 1);
  if (field("write") !== "ok") {
    throw new SshError("deploy", `Cannot upload the agent to ${temp}: ${output.stderr.trim().slice(-300)}`);
  }
  const uploaded = parseHash(field("temp"));
  if (uploaded === undefined) throw unreadable(temp, output);
  if (uploaded !== agent.sha256) {
    throw new SshError("deploy", `The uploaded agent is corrupt (sha256 ${uploaded}, expected ${agent.sha256})`);
  }
  const verified = parseHash(field("final"));
  if (verified !== agent.sha256) {
    throw new SshError("deploy", `The agent at ${finalPath} does not verify after upload (sha256 ${verified})`);
  }
}

/**
 * Makes sure the verified agent is on the remote and returns its path: a present binary whose SHA-256 verifies is
 * used as it is; a missing, truncated or tampered one is (re)uploaded and verified again. Never returns a path whose
 * hash did not just verify.
 */
export async function deployOn(
  remote: RemoteAccess,
  platform: RemotePlatform,
  options: DeployOptions = {},
): Promise<DeployedAgent> {
  if (platform.platform === "windows") return deployOnWindows(remote, platform, options);
  const agent = await localAgent(platform, options);
  const path = remoteAgentPath(platform, agent.sha256);
  if ((await remoteHash(remote, path)) === agent.sha256) return { path, sha256: agent.sha256, uploaded: false };
  await install(remote, agent, path, options);
  return { path, sha256: agent.sha256, uploaded: true };
}

/**
 * Windows through cmd.exe (Windows OpenSSH's default shell): the agent goes to
 * `%USERPROFILE%\.outpost\bin\outpost-<sha256>.exe` over SFTP and is verified by hashing its bytes read back over
 * SFTP, here, before every start. Agents of other versions are not removed on Windows (SSH2 reads `/proc`).
 */
async function deployOnWindows(
  remote: RemoteAccess,
  platform: RemotePlatform,
  options: DeployOptions,
): Promise<DeployedAgent> {
  const sftp = remote.sftp;
  if (platform.shell !== "cmd" || sftp === undefined) {
    const how = platform.shell !== "cmd" ? `a ${platform.shell} shell` : "this transport";
    throw new SshError(
      "platform",
      `Deploying the Outpost agent to Windows through ${how} is not supported (cmd.exe over the ssh2 transport is)`,
    );
  }
  const agent = await localAgent(platform, options);
  const paths = windowsAgentPaths(platform.home, agent.sha256);
  const deployed = (uploaded: boolean) => ({ path: paths.path, sha256: agent.sha256, uploaded });
  if ((await sftp.sha256(paths.sftp)) === agent.sha256) return deployed(false);
  await uploadOverSftp(sftp, agent, paths.sftp, options);
  const verified = await sftp.sha256(paths.sftp);
  if (verified !== agent.sha256) {
    throw new SshError("deploy", `The agent at ${paths.path} does not verify after upload (sha256 ${verified})`);
  }
  return deployed(true);
}

/** The SFTP upload: a temporary name, verified, then renamed over the final one. */
async function uploadOverSftp(sftp: SftpAccess, agent: LocalAgent, finalPath: string, options: DeployOptions) {
  const dir = finalPath.slice(0, finalPath.lastIndexOf("/"));
  const temp = agentUploadName(dir, agent.sha256);
  try {
    await sftp.put(agent.path, agent.size, dir, temp, options.onProgress);
    const uploaded = await sftp.sha256(temp);
    if (uploaded !== agent.sha256) {
      throw new SshError("deploy", `The uploaded agent is corrupt (sha256 ${uploaded}, expected ${agent.sha256})`);
    }
    await sftp.rename(temp, finalPath);
  } catch (error) {
    await sftp.remove(temp).catch(() => {});
    throw error;
  }
}
