/**
 * The transport-independent rules of deploying the agent by content hash, shared by SSH (`ssh/deploy.ts`) and
 * containers (`container/deploy.ts`): which local binary is the agent for a platform and its SHA-256, the file
 * name it is deployed under, and reading a hash out of `sha256sum`-like output. How bytes get there and how the
 * remote hashes them is each transport's own business.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { type AgentManifest, packagedAgent, readManifest } from "./agent-binary.js";

/** A system the agent is built for, in the SDK's naming (`make dist` targets). */
export interface AgentTarget {
  platform: "linux" | "darwin" | "windows" | "android";
  arch: "x64" | "arm64";
}

/** The local agent binary to deploy and its SHA-256. */
export interface LocalAgent {
  path: string;
  sha256: string;
  size: number;
}

/** `uname -m`'s answer (or Windows' / an engine's spelling) as the SDK's arch; undefined if unsupported. */
export function agentArch(raw: string): AgentTarget["arch"] | undefined {
  const arch = raw.trim().toLowerCase();
  if (arch === "x86_64" || arch === "amd64" || arch === "x64") return "x64";
  if (arch === "aarch64" || arch === "arm64") return "arm64";
  return undefined;
}

/** Hashes of local binaries by path, size, mtime and inode: an SSH connect hashes every packaged agent. */
const hashes = new Map<string, { key: string; sha256: string; size: number }>();

async function hashOf(path: string): Promise<{ sha256: string; size: number }> {
  const info = await stat(path);
  const key = `${info.size}:${info.mtimeMs}:${info.ino}`;
  const cached = hashes.get(path);
  if (cached?.key === key) return { sha256: cached.sha256, size: cached.size };
  const bytes = await readFile(path);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  hashes.set(path, { key, sha256, size: bytes.length });
  return { sha256, size: bytes.length };
}

/**
 * The agent for `target`: `agentBinary` if given; else the SDK's packaged binary (`make dist` for every platform,
 * `make build` for this machine's). Its hash is computed from the bytes themselves; where `bin/manifest.json` lists
 * the platform, the two must agree, so a binary rebuilt or changed after `make dist` is never deployed by mistake.
 * Throws an `Error` whose message says what is wrong; each transport wraps it in its own error type.
 */
export async function agentFor(
  target: AgentTarget,
  agentBinary?: string,
  manifest: () => AgentManifest | undefined = readManifest,
): Promise<LocalAgent> {
  const name = `${target.platform}-${target.arch}`;
  let path: string;
  try {
    path = agentBinary ?? packagedAgent(target.platform, target.arch);
  } catch (error) {
    throw new Error(`No Outpost agent for ${name}: run \`make dist\``, { cause: error });
  }
  let hashed: { sha256: string; size: number };
  try {
    hashed = await hashOf(path);
  } catch (error) {
    throw new Error(`Cannot read the agent ${path}: ${(error as Error).message}`, { cause: error });
  }
  const { sha256, size } = hashed;
  const listed = agentBinary === undefined ? manifest()?.agents[name] : undefined;
  if (listed !== undefined && listed.sha256 !== sha256) {
    throw new Error(
      `The agent ${path} (sha256 ${sha256}) does not match bin/manifest.json (${listed.sha256}); run \`make dist\``,
    );
  }
  return { path, sha256, size };
}

/** The deployed agent's file name: content-addressed, so two versions never share a name. */
export function agentFileName(sha256: string): string {
  return `outpost-${sha256}`;
}

/**
 * A unique temporary name in `dir` for an upload of the agent with `sha256`, renamed to its final name once it
 * verified: a half-written upload (a dropped connection) is never the name that gets run, and SSH2's cleanup finds
 * leftovers by the pattern `.outpost-*.tmp`.
 */
export function agentUploadName(dir: string, sha256: string): string {
  return `${dir}/.outpost-${sha256}.${randomBytes(6).toString("hex")}.tmp`;
}

/** `<home>/.outpost/bin/outpost-<sha256>`: where a POSIX account's agent lives. */
export function agentPathUnder(home: string, sha256: string): string {
  return `${home.replace(/\/+$/, "")}/.outpost/bin/${agentFileName(sha256)}`;
}

/** The lowercase SHA-256 in a line of `sha256sum`, `shasum -a 256` or `openssl dgst -sha256` output. */
export function sha256In(line: string): string | undefined {
  return /\b([0-9a-f]{64})\b/i.exec(line)?.[1]?.toLowerCase();
}
