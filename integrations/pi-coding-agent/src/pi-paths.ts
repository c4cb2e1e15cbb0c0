/**
 * pi's path rule for tool arguments, for the one tool Outpost runs itself (grep): a leading `@` is dropped, Unicode
 * spaces become spaces, `~` is the home directory, and a relative path is taken from the tool's `cwd`. pi's own
 * tools resolve their paths the same way before they call the operations.
 */
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/** The absolute path pi's tools use for a path argument. */
export function resolveToolPath(path: string, cwd: string): string {
  const withoutAt = path.startsWith("@") ? path.slice(1) : path;
  const spaced = withoutAt.replace(UNICODE_SPACES, " ");
  let expanded = spaced;
  if (spaced === "~") expanded = homedir();
  else if (spaced.startsWith("~/")) expanded = homedir() + spaced.slice(1);
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}
