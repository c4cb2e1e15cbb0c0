/** Where the packaged agent binaries live, and the manifest `make dist` writes next to them. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One packaged agent, as recorded in `bin/manifest.json`. */
export interface AgentManifestEntry {
  /** Path relative to the `bin` directory, e.g. `linux-x64/outpost`. */
  path: string;
  /** Lowercase hex SHA-256 of the binary. */
  sha256: string;
  size: number;
}

/** `bin/manifest.json`: the SDK version and every packaged agent keyed by `<platform>-<arch>`. */
export interface AgentManifest {
  version: string;
  agents: Record<string, AgentManifestEntry>;
}

/** The SDK package root: this module is in `src/env/` (sources) or `dist/env/` (build), two levels below it. */
const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const BIN_DIR = join(PACKAGE_ROOT, "bin");

/** This machine's platform in the SDK's naming: `linux`, `darwin`, `windows` (for `win32`) or `android`. */
export function hostPlatform(): string {
  return process.platform === "win32" ? "windows" : process.platform;
}

/**
 * The absolute path of the agent packaged for `platform`-`arch` (default: this machine). For this machine,
 * `OUTPOST_AGENT` overrides the packaged binary. Throws if the binary is missing, naming the platform the package
 * lacks. The published package carries every agent `make dist` builds (linux, darwin, windows × x64, arm64): one
 * package rather than one per platform, because `connectSsh` deploys the remote's agent from this host's package.
 */
export function packagedAgent(platform: string = hostPlatform(), arch: string = process.arch): string {
  const override = process.env.OUTPOST_AGENT;
  const forHost = platform === hostPlatform() && arch === process.arch;
  const name = `${platform}-${arch}`;
  if (forHost && override !== undefined && override !== "") {
    const path = resolve(override);
    if (!existsSync(path)) throw new Error(`No Outpost agent for ${name} at ${path} (set by OUTPOST_AGENT)`);
    return path;
  }
  const path = join(BIN_DIR, name, platform === "windows" ? "outpost.exe" : "outpost");
  if (!existsSync(path)) {
    throw new Error(
      `No Outpost agent for ${name} at ${path}: this @outpost/sdk package does not carry the ${name} agent ` +
        "(a release carries every platform of `make dist`; in a checkout run `make build` for this machine's)",
    );
  }
  return path;
}

function isEntry(value: unknown): value is AgentManifestEntry {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return typeof entry.path === "string" && typeof entry.sha256 === "string" && typeof entry.size === "number";
}

/**
 * Reads `bin/manifest.json` (written by `make dist`; `binDir` defaults to the package's `bin`). Returns `undefined`
 * if there is none; throws if it exists but is not a valid manifest, since deploying against a broken manifest
 * would skip verification.
 */
export function readManifest(binDir: string = BIN_DIR): AgentManifest | undefined {
  const file = join(binDir, "manifest.json");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`Invalid agent manifest at ${file}: ${(error as Error).message}`);
  }
  const manifest = parsed as Partial<AgentManifest> | null;
  if (
    typeof manifest !== "object" ||
    manifest === null ||
    typeof manifest.version !== "string" ||
    typeof manifest.agents !== "object" ||
    manifest.agents === null ||
    !Object.values(manifest.agents).every(isEntry)
  ) {
    throw new Error(`Invalid agent manifest at ${file}`);
  }
  return { version: manifest.version, agents: { ...manifest.agents } };
}
