/**
 * Known hosts in OpenSSH's format: reading trusted keys (plain, wildcard and hashed host fields, `[host]:port`,
 * `@revoked`), checking a presented key, and changing Outpost's own file safely across processes (an exclusive lock
 * file, then a temporary file renamed over the original).
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { HostKeyChangedError, HostKeyUnknownError, SshError } from "./errors.js";

/** The name OpenSSH stores a host under: `host` on port 22, `[host]:port` otherwise; lower case. */
export function knownHostsName(host: string, port: number): string {
  const name = host.toLowerCase();
  return port === 22 ? name : `[${name}]:${port}`;
}

/** OpenSSH's fingerprint of a public key blob: `SHA256:` and the unpadded base64 of its SHA-256. */
export function fingerprintOf(blob: Uint8Array): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** The key type a public key blob starts with (an SSH string), e.g. `ssh-ed25519`; `""` if malformed. */
export function keyTypeOf(blob: Uint8Array): string {
  if (blob.length < 4) return "";
  const length = Buffer.from(blob.buffer, blob.byteOffset, blob.length).readUInt32BE(0);
  if (length === 0 || length > 64 || 4 + length > blob.length) return "";
  return Buffer.from(blob.subarray(4, 4 + length)).toString("latin1");
}

/** One key line of a known-hosts file. */
interface Entry {
  marker: "" | "@revoked" | "@cert-authority";
  hosts: string;
  keyType: string;
  key: Buffer;
}

function parseLine(line: string): Entry | undefined {
  const fields = line.trim().split(/\s+/);
  if (fields.length === 0 || fields[0] === "" || fields[0].startsWith("#")) return undefined;
  let marker: Entry["marker"] = "";
  if (fields[0].startsWith("@")) {
    if (fields[0] !== "@revoked" && fields[0] !== "@cert-authority") return undefined;
    marker = fields[0];
    fields.shift();
  }
  if (fields.length < 3) return undefined;
  const key = Buffer.from(fields[2], "base64");
  if (key.length === 0 || keyTypeOf(key) !== fields[1]) return undefined;
  return { marker, hosts: fields[0], keyType: fields[1], key };
}

/** OpenSSH's `match_pattern`: `*` any run, `?` one character, the whole name (case-sensitive). */
export function matchPattern(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "s").test(name);
}

function hashedMatch(field: string, name: string): boolean {
  const parts = field.split("|");
  if (parts.length !== 4 || parts[1] !== "1") return false;
  const salt = Buffer.from(parts[2], "base64");
  const expected = Buffer.from(parts[3], "base64");
  const actual = createHmac("sha1", salt).update(name).digest();
  return expected.length === actual.length && actual.equals(expected);
}

/** Whether an entry's host field names `name` (a negated pattern that matches excludes it). */
function hostsMatch(hosts: string, name: string): boolean {
  if (hosts.startsWith("|")) return hashedMatch(hosts, name);
  let matched = false;
  for (const raw of hosts.split(",")) {
    const negated = raw.startsWith("!");
    const pattern = (negated ? raw.slice(1) : raw).toLowerCase();
    if (!matchPattern(pattern, name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** The keys trusted for one host, gathered from several known-hosts files. */
export interface HostTrust {
  /** The name looked up (see {@link knownHostsName}). */
  name: string;
  /** Trusted key blobs by key type. */
  keys: Map<string, Buffer[]>;
  /** Keys marked `@revoked` for this host. */
  revoked: Buffer[];
}

async function readLines(file: string): Promise<string[]> {
  try {
    return (await readFile(file, "utf8")).split("\n");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new SshError("known_hosts", `Cannot read known hosts ${file}: ${(error as Error).message}`, error);
  }
}

/** Reads what `files` say about host `name`; a missing file says nothing, an unreadable one fails. */
export async function readTrust(files: readonly string[], name: string): Promise<HostTrust> {
  const trust: HostTrust = { name, keys: new Map(), revoked: [] };
  for (const file of files) {
    for (const line of await readLines(file)) {
      const entry = parseLine(line);
      if (entry === undefined || entry.marker === "@cert-authority" || !hostsMatch(entry.hosts, name)) continue;
      if (entry.marker === "@revoked") {
        trust.revoked.push(entry.key);
        continue;
      }
      const known = trust.keys.get(entry.keyType) ?? [];
      if (!known.some((key) => key.equals(entry.key))) known.push(entry.key);
      trust.keys.set(entry.keyType, known);
    }
  }
  return trust;
}

/** Checks a presented key against the trust: `undefined` when trusted, else the error to fail the connection with. */
export function checkHostKey(trust: HostTrust, blob: Buffer): SshError | undefined {
  const keyType = keyTypeOf(blob);
  const fingerprint = fingerprintOf(blob);
  if (trust.revoked.some((key) => key.equals(blob))) {
    return new SshError("host_key_revoked", `The host key of ${trust.name} (${fingerprint}) is marked @revoked`);
  }
  const known = trust.keys.get(keyType);
  if (known === undefined || known.length === 0) return new HostKeyUnknownError(trust.name, keyType, fingerprint);
  if (known.some((key) => key.equals(blob))) return undefined;
  return new HostKeyChangedError(trust.name, keyType, known.map(fingerprintOf), fingerprint);
}

/** The key types trusted for the host, for preferring them in the handshake as OpenSSH does. */
export function trustedKeyTypes(trust: HostTrust): string[] {
  return [...trust.keys.keys()];
}

const LOCK_WAIT_MS = 10_000;
const LOCK_STALE_MS = 30_000;
const LOCK_RETRY_MS = 15;

/** Per-file chains, so updates from one process queue up instead of polling the lock file against each other. */
const chains = new Map<string, Promise<unknown>>();

async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockPath, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => unlink(lockPath).catch(() => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    // A lock left by a process that died mid-update must not block every later update.
    const age = await stat(lockPath).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > LOCK_STALE_MS) await unlink(lockPath).catch(() => {});
    if (Date.now() > deadline) throw new Error(`${lockPath} is held by another process`);
    await new Promise((done) => setTimeout(done, LOCK_RETRY_MS + Math.random() * LOCK_RETRY_MS));
  }
}

async function rewrite(file: string, change: (lines: string[]) => string[]): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const release = await acquireLock(`${file}.lock`);
  try {
    const before = (await readLines(file)).filter((line, index, all) => line !== "" || index < all.length - 1);
    const after = change(before);
    const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(after.length === 0 ? "" : `${after.join("\n")}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
  } finally {
    await release();
  }
}

/**
 * Changes `file` under its lock: `change` gets the current lines and returns the new ones, written to a temporary
 * file renamed over the old one, so readers see the old or the new file, never a mix, and no update is lost.
 */
export function updateKnownHosts(file: string, change: (lines: string[]) => string[]): Promise<void> {
  const key = resolve(file);
  // A chain holds only settled promises (`settled` below), so the previous update never rejects here.
  const previous = chains.get(key) ?? Promise.resolve();
  const next = previous.then(() => rewrite(key, change));
  const settled = next.catch(() => {});
  chains.set(key, settled);
  settled.then(() => {
    if (chains.get(key) === settled) chains.delete(key);
  });
  return next.catch((error: unknown) => {
    throw error instanceof SshError
      ? error
      : new SshError("known_hosts", `Cannot update known hosts ${file}: ${(error as Error).message}`, error);
  });
}

/** The line Outpost writes for a trusted key: unhashed, so people can read and edit their trust file. */
export function knownHostsLine(name: string, blob: Buffer): string {
  return `${name} ${keyTypeOf(blob)} ${blob.toString("base64")}`;
}

/** Adds `blob` for `name` unless the same line is there already (concurrent identical accepts leave one line). */
export function addHostKey(file: string, name: string, blob: Buffer): Promise<void> {
  return updateKnownHosts(file, (lines) => {
    const present = lines.some((line) => {
      const entry = parseLine(line);
      return entry !== undefined && entry.marker === "" && entry.key.equals(blob) && hostsMatch(entry.hosts, name);
    });
    return present ? lines : [...lines, knownHostsLine(name, blob)];
  });
}

/** Removes every unmarked entry whose host field names `name` (plain, wildcard or hashed). */
export function removeHost(file: string, name: string): Promise<void> {
  return updateKnownHosts(file, (lines) =>
    lines.filter((line) => {
      const entry = parseLine(line);
      return entry === undefined || entry.marker !== "" || !hostsMatch(entry.hosts, name);
    }),
  );
}
