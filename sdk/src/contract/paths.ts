/**
 * Path resolution as `NodeExecutionEnv` does it, computed on this machine with the agent's path rules.
 *
 * Node resolves with the process's own home, working directory and (on Windows) per-drive working directories.
 * Here those come from the agent's `hello` answer, so every function is pure: it reads nothing from this process.
 */
import { posix, win32 } from "node:path";
import { fileURLToPath } from "node:url";

/** Node's `path` module flavour (`path.posix` or `path.win32`). */
export type PathApi = typeof posix;

/** What path resolution needs to know about the agent's machine (a subset of the agent's `hello` answer). */
export interface PathRules {
  /** The agent's operating system as pi-env names it: `linux`, `macos`, `android`, `windows`. */
  readonly os: string;
  /** The agent's home directory (`os.homedir()` there). */
  readonly home: string;
  /** The agent's working directory, the base of relative paths when the env's `cwd` is itself relative. */
  readonly cwd: string;
  /** Windows only: the working directory of each drive (`=C:` variables), keyed like `C:`. */
  readonly driveCwds: Readonly<Record<string, string>>;
}

/** True when the agent runs on Windows, whose paths follow `path.win32`. */
export function isWindows(rules: Pick<PathRules, "os">): boolean {
  return rules.os === "windows";
}

/** The `path` flavour of the agent's machine. */
export function pathApi(rules: Pick<PathRules, "os">): PathApi {
  return isWindows(rules) ? win32 : posix;
}

/**
 * `path.resolve(...segments)` as Node computes it on the agent's machine: the agent's working directory replaces
 * `process.cwd()`, and on Windows its per-drive working directories replace the `=X:` environment variables.
 */
export function resolveOnAgent(rules: PathRules, ...segments: string[]): string {
  if (!isWindows(rules)) return posix.resolve(rules.cwd, ...segments);
  const pending = unresolvedDevice(segments);
  if (pending === undefined) return win32.resolve(...segments);
  const base = windowsBase(rules, pending);
  return base === undefined ? driveRelative(pending, segments) : win32.resolve(base, ...segments);
}

/**
 * Resolves a caller's path like `NodeExecutionEnv`'s `resolvePath`: `~` and `~/…` (also `~\…` on Windows) use the
 * agent's home, a `file://` URL becomes its path (a malformed one stays an ordinary relative path), an absolute path
 * is normalized, and anything else is resolved against `cwd` (which may itself be relative to the agent's cwd).
 */
export function resolveEnvPath(rules: PathRules, cwd: string, path: string): string {
  const api = pathApi(rules);
  if (path === "~") return rules.home;
  if (path.startsWith("~/") || (isWindows(rules) && path.startsWith("~\\"))) return api.join(rules.home, path.slice(2));
  const local = path.startsWith("file://") ? filePathOfUrl(path, isWindows(rules)) : path;
  return api.isAbsolute(local) ? resolveOnAgent(rules, local) : resolveOnAgent(rules, cwd, local);
}

/** `path.join(...parts)` with the agent's rules. */
export function joinOnAgent(rules: Pick<PathRules, "os">, parts: readonly string[]): string {
  return pathApi(rules).join(...parts);
}

/** `path.basename(path)` with the agent's rules (`""` for a root). */
export function basenameOnAgent(rules: Pick<PathRules, "os">, path: string): string {
  return pathApi(rules).basename(path);
}

/** `path.dirname(path)` with the agent's rules. */
export function dirnameOnAgent(rules: Pick<PathRules, "os">, path: string): string {
  return pathApi(rules).dirname(path);
}

/** Node's `fileURLToPath`, keeping the original text when Node refuses the URL. */
function filePathOfUrl(url: string, windows: boolean): string {
  try {
    return fileURLToPath(url, { windows });
  } catch {
    return url;
  }
}

/** The root of one path as `path.win32.resolve` sees it. */
interface WindowsRoot {
  /** Drive (`C:`) or UNC share (`\\server\share`); empty when the path names none. */
  device: string;
  /** Whether the path starts at a root (a separator after the device, or a leading separator). */
  absolute: boolean;
}

function isSeparator(code: number): boolean {
  return code === 0x2f || code === 0x5c;
}

function isDriveLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** Parses the root of a path exactly as Node's `win32.resolve` does (drive, UNC share, or leading separator). */
function windowsRoot(path: string): WindowsRoot {
  const first = path.charCodeAt(0);
  if (path.length === 1) return { device: "", absolute: isSeparator(first) };
  if (isSeparator(first)) return { device: uncDevice(path), absolute: true };
  if (isDriveLetter(first) && path.charCodeAt(1) === 0x3a) {
    return { device: path.slice(0, 2), absolute: path.length > 2 && isSeparator(path.charCodeAt(2)) };
  }
  return { device: "", absolute: false };
}

/** The `\\server\share` device of a UNC path, or `""` when the path is not one. */
function uncDevice(path: string): string {
  if (!isSeparator(path.charCodeAt(1))) return "";
  let index = 2;
  const serverStart = index;
  while (index < path.length && !isSeparator(path.charCodeAt(index))) index++;
  if (index >= path.length || index === serverStart) return "";
  const server = path.slice(serverStart, index);
  while (index < path.length && isSeparator(path.charCodeAt(index))) index++;
  if (index >= path.length) return "";
  const shareStart = index;
  while (index < path.length && !isSeparator(path.charCodeAt(index))) index++;
  return `\\\\${server}\\${path.slice(shareStart, index)}`;
}

/**
 * Replays `win32.resolve`'s right-to-left scan and reports the device still missing a base: `undefined` when the
 * segments alone give an absolute path with a device, `""` when no device was named, else the drive that needs
 * its working directory.
 */
function unresolvedDevice(segments: readonly string[]): string | undefined {
  let device = "";
  let absolute = false;
  for (let index = segments.length - 1; index >= 0; index--) {
    const segment = segments[index];
    if (segment.length === 0) continue;
    const root = windowsRoot(segment);
    if (root.device.length > 0) {
      if (device.length === 0) device = root.device;
      else if (root.device.toLowerCase() !== device.toLowerCase()) continue;
    }
    if (!absolute) absolute = root.absolute;
    if (absolute && device.length > 0) return undefined;
  }
  return device;
}

/**
 * The directory Node would fall back to: the agent's cwd when no drive was named; else that drive's working
 * directory (or the agent's cwd), replaced by the drive's root when it lies on another drive.
 * `undefined` when Node skips the fallback too: it lies on another device yet has no backslash at index 2 (an agent
 * whose cwd is a UNC path, and a drive without its own cwd), so the result stays drive-relative.
 */
function windowsBase(rules: PathRules, device: string): string | undefined {
  if (device.length === 0) return rules.cwd;
  const base = driveCwd(rules, device) || rules.cwd;
  if (base.slice(0, 2).toLowerCase() === device.toLowerCase()) return base;
  if (base.charCodeAt(2) === 0x5c) return `${device}\\`;
  const baseDevice = windowsRoot(base).device;
  return baseDevice.length === 0 || baseDevice.toLowerCase() === device.toLowerCase() ? base : undefined;
}

/**
 * What `win32.resolve` returns when no segment is rooted and no fallback applies: the device followed by the
 * normalized tail of every segment on that device (or on none), without a trailing separator.
 */
function driveRelative(device: string, segments: readonly string[]): string {
  const tails: string[] = [];
  for (const segment of segments) {
    const root = windowsRoot(segment);
    if (root.device.length > 0 && root.device.toLowerCase() !== device.toLowerCase()) continue;
    tails.push(segment.slice(root.device.length));
  }
  return `${device}${normalizeRelativeTail(tails.join("\\"))}`;
}

/** Node's `normalizeString` for a path that is not rooted: `.` dropped, `..` kept above the start. */
function normalizeRelativeTail(tail: string): string {
  const parts: string[] = [];
  for (const part of tail.split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else parts.push(part);
  }
  return parts.join("\\");
}

/** The working directory of a drive; Windows environment names ignore case, so `d:` finds `=D:`. */
function driveCwd(rules: PathRules, device: string): string | undefined {
  const wanted = device.toLowerCase();
  for (const [drive, directory] of Object.entries(rules.driveCwds)) {
    if (drive.toLowerCase() === wanted) return directory;
  }
  return undefined;
}

/** True when a path holds a NUL character, which Node refuses (`ERR_INVALID_ARG_VALUE`) before any system call. */
export function hasNulByte(path: string): boolean {
  return path.includes("\u0000");
}
