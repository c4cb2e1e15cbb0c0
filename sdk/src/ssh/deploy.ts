/**
 * `deployAgent`: the agent for the remote's platform, uploaded over SFTP to `~/.outpost/bin/outpost-<sha256>`
 * (a temporary name, verified, then renamed into place; mode 0755 in a 0700 directory), and verified by its SHA-256
 * on the remote before every start; after an upload, agents of other versions are removed. No path passes through a
 * remote shell unquoted. Windows through cmd.exe: `%USERPROFILE%\.outpost\bin\outpost-<sha256>.exe`, hashed here
 * from its bytes read back over SFTP (spec/semantics.md SSH5).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type AgentManifest, packagedAgent, readManifest } from "../env/agent-binary.js";
import { SshError } from "./errors.js";
import type { RemotePlatform } from "./platform.js";
import type { RemoteAccess } from "./remote-access.js";
import { afterMarker, shellQuote } from "./remote-command.js";
import { windowsAgentPaths } from "./windows.js";

/** The local agent binary to deploy and its SHA-256. */
export interface LocalAgent {
  path: string;
  sha256: string;
  size: number;
}

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

async function hashOf(path: string): Promise<{ sha256: string; size: number }> {
  const bytes = await readFile(path);
  return { sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length };
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
  const target = `${platform.platform}-${platform.arch}`;
  let path: string;
  try {
    path = options.agentBinary ?? packagedAgent(platform.platform, platform.arch);
  } catch (error) {
    throw new SshError("deploy", `No Outpost agent for ${target}: run \`make dist\``, error);
  }
  const { sha256, size } = await hashOf(path).catch((error: Error) => {
    throw new SshError("deploy", `Cannot read the agent ${path}: ${error.message}`, error);
  });
  const listed = options.agentBinary === undefined ? manifest()?.agents[target] : undefined;
  if (listed !== undefined && listed.sha256 !== sha256) {
    throw new SshError(
      "deploy",
      `The agent ${path} (sha256 ${sha256}) does not match bin/manifest.json (${listed.sha256}); run \`make dist\``,
    );
  }
  return { path, sha256, size };
}

const HASH_MARKER = "OUTPOST-HASH";
const HASH_SCRIPT = [
  `f=$1; echo ${HASH_MARKER}`,
  'if [ ! -f "$f" ]; then echo missing',
  'elif command -v sha256sum >/dev/null 2>&1; then sha256sum < "$f"',
  'elif command -v shasum >/dev/null 2>&1; then shasum -a 256 < "$f"',
  'elif command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 < "$f"',
  "else echo nohash; fi",
].join("; ");

/** The SHA-256 of a remote file, `"missing"` if there is no such regular file. */
export async function remoteHash(remote: RemoteAccess, path: string): Promise<string> {
  // The path is an argument of `sh -c`, quoted for the account's shell; the script itself only says "$1".
  const output = await remote.run(`sh -c ${shellQuote(HASH_SCRIPT)} outpost-hash ${shellQuote(path)}`);
  const line = (afterMarker(output.stdout, HASH_MARKER) ?? []).find((text) => text.trim() !== "")?.trim();
  if (line === "missing") return "missing";
  if (line === "nohash") {
    throw new SshError("deploy", "The remote has no sha256sum, shasum or openssl to verify the Outpost agent with");
  }
  const hex = line === undefined ? undefined : /\b([0-9a-f]{64})\b/i.exec(line)?.[1];
  if (hex === undefined) {
    throw new SshError(
      "deploy",
      `Cannot hash ${path} on the remote: ${JSON.stringify((output.stdout + output.stderr).trim().slice(-300))}`,
    );
  }
  return hex.toLowerCase();
}

/** The remote directory and file name the agent with `sha256` lives under. */
export function remoteAgentPath(platform: RemotePlatform, sha256: string): string {
  const home = platform.home.replace(/\/+$/, "");
  return `${home}/.outpost/bin/outpost-${sha256}`;
}

/** Hashes a remote file: `"missing"` if there is no such regular file. */
type RemoteHasher = (path: string) => Promise<string>;

async function upload(
  remote: RemoteAccess,
  agent: LocalAgent,
  finalPath: string,
  options: DeployOptions,
  hash: RemoteHasher,
) {
  const dir = finalPath.slice(0, finalPath.lastIndexOf("/"));
  // A unique temporary name: a half-written upload (a dropped connection) is never the name that gets run.
  const temp = `${dir}/.outpost-${agent.sha256}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await remote.put(agent.path, agent.size, dir, temp, options.onProgress);
    const uploaded = await hash(temp);
    if (uploaded !== agent.sha256) {
      throw new SshError("deploy", `The uploaded agent is corrupt (sha256 ${uploaded}, expected ${agent.sha256})`);
    }
    await remote.rename(temp, finalPath);
  } catch (error) {
    await remote.remove(temp).catch(() => {});
    throw error;
  }
}

/**
 * Removes agents of other versions from the agent's directory (spec/semantics.md SSH2): every `outpost-<sha256>`
 * but the current one, the most recently uploaded other one, and any that a process runs (seen in `/proc`; without
 * `/proc` nothing is removed); and upload leftovers (`.outpost-*.tmp`) older than an hour.
 */
const CLEANUP_SCRIPT = [
  'd=$(cd "$1" 2>/dev/null && pwd -P) || exit 0; keep="outpost-$2"',
  'cd "$d" || exit 0',
  "[ -e /proc/self/exe ] || exit 0",
  "running=$(ls -l /proc/[0-9]*/exe 2>/dev/null | sed -n 's/^.* -> //p')",
  "agents=$(ls -t 2>/dev/null | grep -E -x 'outpost-[0-9a-f]{64}')",
  'previous=$(printf "%s\\n" "$agents" | grep -v -x -F -e "$keep" | head -n 1)',
  "for f in $agents; do",
  '  if [ "$f" = "$keep" ] || [ "$f" = "$previous" ]; then continue; fi',
  '  if printf "%s\\n" "$running" | grep -q -x -F -e "$d/$f"; then continue; fi',
  '  rm -f -- "$f"',
  "done",
  "find . -maxdepth 1 -name '.outpost-*.tmp' -mmin +60 -exec rm -f {} + 2>/dev/null",
  "exit 0",
].join("\n");

async function removeStaleAgents(remote: RemoteAccess, path: string, sha256: string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  await remote.run(`sh -c ${shellQuote(CLEANUP_SCRIPT)} outpost-clean ${shellQuote(dir)} ${shellQuote(sha256)}`);
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
  const hash = (file: string) => remoteHash(remote, file);
  if ((await hash(path)) === agent.sha256) return { path, sha256: agent.sha256, uploaded: false };
  await upload(remote, agent, path, options, hash);
  const verified = await hash(path);
  if (verified !== agent.sha256) {
    throw new SshError("deploy", `The agent at ${path} does not verify after upload (sha256 ${verified})`);
  }
  // Best effort: a failed cleanup leaves old files behind, never fails a deployment that worked.
  await removeStaleAgents(remote, path, agent.sha256).catch(() => {});
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
  const sha256 = remote.sha256?.bind(remote);
  if (platform.shell !== "cmd" || sha256 === undefined) {
    const how = platform.shell !== "cmd" ? `a ${platform.shell} shell` : "this transport";
    throw new SshError(
      "platform",
      `Deploying the Outpost agent to Windows through ${how} is not supported (cmd.exe over the ssh2 transport is)`,
    );
  }
  const agent = await localAgent(platform, options);
  const paths = windowsAgentPaths(platform.home, agent.sha256);
  const deployed = (uploaded: boolean) => ({ path: paths.path, sha256: agent.sha256, uploaded });
  if ((await sha256(paths.sftp)) === agent.sha256) return deployed(false);
  await upload(remote, agent, paths.sftp, options, sha256);
  const verified = await sha256(paths.sftp);
  if (verified !== agent.sha256) {
    throw new SshError("deploy", `The agent at ${paths.path} does not verify after upload (sha256 ${verified})`);
  }
  return deployed(true);
}
