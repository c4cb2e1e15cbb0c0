/**
 * Path resolution of the reference env: how a caller's path becomes the absolute path every file method and
 * `exec`'s `options.cwd` use. Purely textual: nothing is looked up on disk and it never fails.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const onWindows = process.platform === "win32";

/**
 * Resolves `path` against `cwd` the way Durable's `NodeExecutionEnv` does:
 * `~` and `~/…` name the home directory, a `file://` URL is converted (a malformed one is kept as an ordinary
 * relative path), an absolute path is normalized, anything else is resolved against `cwd`.
 */
export function resolvePath(cwd: string, path: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/") || (onWindows && path.startsWith("~\\"))) return join(homedir(), path.slice(2));
  let rewritten = path;
  if (path.startsWith("file://")) {
    try {
      rewritten = fileURLToPath(path);
    } catch {
      // A URL Node refuses (foreign host, encoded slash, bad escape) is kept and treated as a relative name.
      rewritten = path;
    }
  }
  return isAbsolute(rewritten) ? resolve(rewritten) : resolve(cwd, rewritten);
}
