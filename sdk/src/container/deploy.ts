/**
 * The agent inside a container, by content hash (spec/semantics.md CT1): the container's system found with `uname`,
 * the agent for it copied to `$HOME/.outpost/bin/outpost-<sha256>` — or `/tmp/.outpost/bin/…` where that is not
 * possible — and its SHA-256 checked before every start. A missing, truncated or tampered copy is replaced; a copy
 * that does not verify is never run.
 *
 * With a shell (`sh`) in the container, everything goes through `exec -i … sh -c` (the bytes on stdin, hashed
 * inside with `sha256sum`, `shasum` or `openssl`; without any of them, read back and hashed here). Without one,
 * Podman and Docker copy with `cp` (a tar archive) and the bytes are read back with `cp` and hashed here.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  type AgentTarget,
  agentArch,
  agentFileName,
  agentFor,
  agentUploadName,
  type LocalAgent,
  sha256In,
} from "../env/agent-deploy.js";
import {
  commandError,
  copyInArgv,
  copyOutArgv,
  type EngineOutput,
  type EngineTarget,
  execArgv,
  hostPlatformArgv,
  lacksProgram,
  runEngine,
} from "./engine.js";
import { ContainerError } from "./errors.js";
import { firstFileOf, tarOfFile } from "./tar.js";

/** The container's system as far as deployment cares. */
export interface ContainerPlatform extends AgentTarget {
  /** Whether the container has `sh`: without it, no probe and no `sh -c` steps. */
  shell: boolean;
  /** The directory the agent is deployed to (see the module's rule). */
  dir: string;
}

/** Where the agent was put and whether this call copied it. */
export interface DeployedAgent {
  path: string;
  sha256: string;
  /** `false` when a verified copy was already there. */
  copied: boolean;
}

const MARKER = "OUTPOST-PROBE";
/**
 * The deployment directory rule: `$HOME/.outpost/bin` if `HOME` is set, absolute, and that directory can be
 * created by (and is owned and writable by) the exec user; else `/tmp/.outpost/bin` under the same conditions;
 * else `-` (no place). Directories are created mode 0700.
 */
const PROBE_SCRIPT = [
  `echo ${MARKER}; uname -s; uname -m`,
  "umask 077",
  'usable() { mkdir -p "$1" 2>/dev/null && [ -d "$1" ] && [ -O "$1" ] && [ -w "$1" ]; }',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script, not a template
  'd=-; case "${HOME-}" in /*) usable "${HOME%/}/.outpost/bin" && d="${HOME%/}/.outpost/bin";; esac',
  '[ "$d" = - ] && usable /tmp/.outpost/bin && d=/tmp/.outpost/bin',
  'echo "$d"',
].join("\n");

const HASH_MARKER = "OUTPOST-HASH";
/** Prints the marker, then the SHA-256 of "$1", `missing` (no regular file) or `nohash` (no tool to hash with). */
export const HASH_FUNCTION = [
  'h() { if [ ! -f "$1" ]; then echo missing',
  'elif command -v sha256sum >/dev/null 2>&1; then sha256sum < "$1"',
  'elif command -v shasum >/dev/null 2>&1; then shasum -a 256 < "$1"',
  'elif command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 < "$1"',
  "else echo nohash; fi; }",
].join("\n");
const HASH_SCRIPT = `${HASH_FUNCTION}\necho ${HASH_MARKER}; h "$1"`;
/** Writes stdin to the temporary "$1" (mode 0755) and prints its hash. */
const UPLOAD_SCRIPT = `${HASH_FUNCTION}\numask 077; cat > "$1" && chmod 755 "$1" && echo ${HASH_MARKER} && h "$1"`;
/** Renames "$1" to "$2" and prints the hash of "$2". */
const RENAME_SCRIPT = `${HASH_FUNCTION}\nmv -f "$1" "$2" && echo ${HASH_MARKER} && h "$2"`;
const NO_SHELL_DIR = "/tmp/.outpost/bin";

function linesAfter(stdout: Buffer, marker: string): string[] | undefined {
  const lines = stdout.toString("utf8").split("\n");
  const at = lines.findIndex((line) => line.trim() === marker);
  return at < 0 ? undefined : lines.slice(at + 1).map((line) => line.trim());
}

async function run(
  target: EngineTarget,
  command: readonly string[],
  failure: "platform" | "deploy",
  what: string,
  input?: Uint8Array,
): Promise<EngineOutput> {
  const argv = execArgv(target, command);
  const output = await runEngine(argv, input);
  if (output.code !== 0) throw commandError(argv, output, failure, what);
  return output;
}

function platformOf(system: string, machine: string): AgentTarget {
  const arch = agentArch(machine);
  if (arch === undefined) throw new ContainerError("platform", `Unsupported architecture in the container: ${machine}`);
  if (system.toLowerCase() !== "linux") {
    throw new ContainerError("platform", `Unsupported system in the container: ${system}`);
  }
  return { platform: "linux", arch };
}

/** A container without a shell: `uname -sm` if it has `uname`, else the engine's own host (the same kernel). */
async function platformWithoutShell(target: EngineTarget): Promise<ContainerPlatform> {
  const uname = await runEngine(execArgv(target, ["uname", "-sm"]));
  if (uname.code === 0) {
    const [system = "", machine = ""] = uname.stdout.toString("utf8").trim().split(/\s+/);
    return { ...platformOf(system, machine), shell: false, dir: NO_SHELL_DIR };
  }
  if (target.kind === "kubectl") {
    throw new ContainerError("platform", `The pod ${target.container} has neither sh nor uname to identify it with`);
  }
  const argv = hostPlatformArgv(target);
  const output = await runEngine(argv);
  if (output.code !== 0) throw commandError(argv, output, "platform", "Cannot ask the engine for its platform");
  const [system = "", machine = ""] = output.stdout.toString("utf8").trim().split("/");
  return { ...platformOf(system, machine), shell: false, dir: NO_SHELL_DIR };
}

/** Identifies the container's system and picks the deployment directory. */
export async function detectPlatform(target: EngineTarget): Promise<ContainerPlatform> {
  const argv = execArgv(target, ["sh", "-c", PROBE_SCRIPT]);
  const output = await runEngine(argv);
  if (lacksProgram(output)) return platformWithoutShell(target);
  if (output.code !== 0) throw commandError(argv, output, "platform", "Cannot identify the container's system");
  const lines = linesAfter(output.stdout, MARKER);
  if (lines === undefined || lines.length < 3) {
    throw new ContainerError("platform", `The probe \`${argv.join(" ")}\` printed ${JSON.stringify(output.stdout)}`);
  }
  const [system, machine, dir] = lines;
  if (dir === "-" || dir === "") {
    throw new ContainerError(
      "deploy",
      "No directory for the agent in the container: neither $HOME/.outpost/bin nor /tmp/.outpost/bin can be " +
        "created and written by its user",
    );
  }
  return { ...platformOf(system, machine), shell: true, dir };
}

function parseHash(output: EngineOutput, path: string): string | "missing" | "nohash" {
  const line = (linesAfter(output.stdout, HASH_MARKER) ?? []).find((text) => text !== "");
  if (line === "missing" || line === "nohash") return line;
  const hex = line === undefined ? undefined : sha256In(line);
  if (hex === undefined) {
    throw new ContainerError(
      "deploy",
      `Cannot hash ${path} in the container: ${JSON.stringify(output.stdout.toString())}`,
    );
  }
  return hex;
}

/** The file's bytes read back out of the container and hashed here; `missing` if it is not there. */
async function hashFromOutside(target: EngineTarget, path: string): Promise<string> {
  const argv = target.kind === "kubectl" ? execArgv(target, ["cat", path]) : copyOutArgv(target, path);
  const output = await runEngine(argv);
  if (output.code !== 0) {
    const error = commandError(argv, output, "deploy", `Cannot read ${path} back from the container`);
    if (error.code !== "deploy") throw error;
    return "missing";
  }
  const bytes = target.kind === "kubectl" ? output.stdout : firstFileOf(output.stdout);
  return bytes === undefined ? "missing" : createHash("sha256").update(bytes).digest("hex");
}

/** The SHA-256 of the container's file `path`, `missing` if there is none. */
export async function hashInContainer(target: EngineTarget, platform: ContainerPlatform, path: string) {
  if (!platform.shell) return hashFromOutside(target, path);
  const hash = parseHash(
    await run(target, ["sh", "-c", HASH_SCRIPT, "outpost-hash", path], "deploy", "Cannot hash the agent"),
    path,
  );
  return hash === "nohash" ? hashFromOutside(target, path) : hash;
}

async function copyWithShell(target: EngineTarget, platform: ContainerPlatform, agent: LocalAgent, path: string) {
  const bytes = await readFile(agent.path);
  const temp = agentUploadName(platform.dir, agent.sha256);
  const copied = await run(
    target,
    ["sh", "-c", UPLOAD_SCRIPT, "outpost-copy", temp],
    "deploy",
    "Cannot copy the agent into the container",
    bytes,
  );
  let hash = parseHash(copied, temp);
  if (hash === "nohash") hash = await hashFromOutside(target, temp);
  if (hash !== agent.sha256) {
    await runEngine(execArgv(target, ["rm", "-f", temp])).catch(() => {});
    throw new ContainerError(
      "deploy",
      `The agent copied into the container is corrupt (sha256 ${hash}, expected ${agent.sha256})`,
    );
  }
  const renamed = await run(
    target,
    ["sh", "-c", RENAME_SCRIPT, "outpost-rename", temp, path],
    "deploy",
    "Cannot move the agent into place",
  );
  const final = parseHash(renamed, path);
  return final === "nohash" ? hashFromOutside(target, path) : final;
}

async function copyWithoutShell(target: EngineTarget, agent: LocalAgent, path: string): Promise<string> {
  if (target.kind === "kubectl") {
    throw new ContainerError(
      "deploy",
      `The pod ${target.container} has no shell: kubectl cp needs tar in the container`,
    );
  }
  const bytes = await readFile(agent.path);
  const argv = copyInArgv(target, "-", path);
  const output = await runEngine(argv, tarOfFile(path.replace(/^\/+/, ""), bytes, 0o755));
  if (output.code !== 0) throw commandError(argv, output, "deploy", "Cannot copy the agent into the container");
  return hashFromOutside(target, path);
}

/**
 * Makes sure the verified agent is in the container and returns its path: a present copy whose SHA-256 verifies is
 * used as it is; a missing, truncated or tampered one is copied again and verified. Never returns a path whose hash
 * did not just verify.
 */
export async function deployInto(
  target: EngineTarget,
  platform: ContainerPlatform,
  agentBinary?: string,
): Promise<DeployedAgent> {
  let agent: LocalAgent;
  try {
    agent = await agentFor(platform, agentBinary);
  } catch (error) {
    throw new ContainerError("deploy", (error as Error).message, error);
  }
  const path = `${platform.dir}/${agentFileName(agent.sha256)}`;
  if ((await hashInContainer(target, platform, path)) === agent.sha256) {
    return { path, sha256: agent.sha256, copied: false };
  }
  const verified = platform.shell
    ? await copyWithShell(target, platform, agent, path)
    : await copyWithoutShell(target, agent, path);
  if (verified !== agent.sha256) {
    throw new ContainerError("deploy", `The agent at ${path} does not verify after copying (sha256 ${verified})`);
  }
  return { path, sha256: agent.sha256, copied: true };
}
