/**
 * Listing files on the target, for find and grep: through the env's `listFiles` where it has one (one walk on the
 * agent, `.gitignore` honoured there), else `fd` (or Debian's `fdfind`) started on the target through `exec`.
 * Nothing here looks at the local disk.
 */
import { posix } from "node:path";
import type { OutpostEnv } from "./env.js";
import { listFilesOf } from "./env.js";
import { contextOf } from "./errno.js";

/** What to list below a root. */
export interface TargetListing {
  /** A glob as pi's find takes it (a basename glob, or a path glob when it holds a `/`); default: everything. */
  pattern?: string;
  /** Globs of directories to leave out, as pi passes them (`**\/node_modules/**`). */
  exclude?: readonly string[];
  /** At most this many paths. */
  limit?: number;
  /** Regular files only (grep); find also lists matching directories where the backend can (fd). */
  filesOnly?: boolean;
}

/** A command's collected output on the target. */
interface Captured {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs an argv on the target and collects both streams. Failures to run at all are thrown. */
export async function capture(
  env: OutpostEnv,
  argv: readonly string[],
  cwd: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Captured> {
  let stdout = "";
  let stderr = "";
  const result = await env.exec(
    argv,
    {
      cwd,
      onOutput: (text, _context, info) => {
        if (info.stream === "stdout") stdout += text;
        else stderr += text;
      },
    },
    contextOf(signal),
  );
  if (!result.ok) throw result.error;
  return { exitCode: result.value.exitCode, stdout, stderr };
}

const commandPaths = new WeakMap<OutpostEnv, Map<string, Promise<string | undefined>>>();

/** The first of `names` the target's shell finds on its PATH (looked up once per env). */
export function findCommand(env: OutpostEnv, names: readonly string[]): Promise<string | undefined> {
  let perEnv = commandPaths.get(env);
  if (perEnv === undefined) {
    perEnv = new Map();
    commandPaths.set(env, perEnv);
  }
  const key = names.join(" ");
  let found = perEnv.get(key);
  if (found === undefined) {
    const script = names.map((name) => `command -v ${name}`).join(" || ");
    found = capture(env, ["/bin/sh", "-c", script], undefined, undefined).then(
      (run) => (run.exitCode === 0 ? run.stdout.split("\n")[0] || undefined : undefined),
      () => undefined,
    );
    perEnv.set(key, found);
  }
  return found;
}

const fdHelp = new WeakMap<OutpostEnv, Promise<string>>();

/**
 * Whether the target's fd knows `--no-require-git` (fd 8.7 and later; Debian 12 ships 8.6). An older fd honours
 * `.gitignore` only inside a git repository, which is what it is then asked for.
 */
async function fdKnowsNoRequireGit(env: OutpostEnv, fd: string): Promise<boolean> {
  let help = fdHelp.get(env);
  if (help === undefined) {
    help = capture(env, [fd, "--help"], undefined, undefined).then(
      (run) => run.stdout,
      () => "",
    );
    fdHelp.set(env, help);
  }
  return (await help).includes("--no-require-git");
}

/** A directory name from pi's ignore globs (`**\/node_modules/**` → `node_modules`). */
function excludedName(glob: string): string {
  return glob.replace(/^\*\*\//, "").replace(/\/\*\*$/, "");
}

/** pi's rule for fd: a glob with a `/` matches the whole path, so it gets a leading `**\/` unless anchored. */
function pathGlob(pattern: string): string {
  if (pattern.startsWith("/") || pattern.startsWith("**/") || pattern === "**") return pattern;
  return `**/${pattern}`;
}

async function listWithListFiles(
  listFiles: NonNullable<ReturnType<typeof listFilesOf>>,
  root: string,
  listing: TargetListing,
  signal: AbortSignal | undefined,
): Promise<string[] | undefined> {
  const globs: string[] = [];
  if (listing.pattern !== undefined)
    globs.push(listing.pattern.includes("/") ? pathGlob(listing.pattern) : listing.pattern);
  else if (listing.exclude?.length) globs.push("*");
  for (const exclude of listing.exclude ?? []) globs.push(`!${exclude}`);
  const listed = await listFiles(
    root,
    {
      hidden: true,
      ignore: true,
      ...(globs.length > 0 ? { glob: globs } : {}),
      ...(listing.limit ? { limit: listing.limit } : {}),
    },
    contextOf(signal),
  );
  if (!listed.ok) {
    if (listed.error.code === "not_supported") return undefined;
    throw new Error(listed.error.message);
  }
  return listed.value.paths.map((path) => posix.join(root, path));
}

async function listWithFd(
  env: OutpostEnv,
  root: string,
  listing: TargetListing,
  signal: AbortSignal | undefined,
): Promise<string[] | undefined> {
  const fd = await findCommand(env, ["fd", "fdfind"]);
  if (fd === undefined) return undefined;
  // The same flags as pi's local find: hidden files, .gitignore in or out of a repository, no colours.
  const argv = [fd, "--glob", "--color=never", "--hidden"];
  if (await fdKnowsNoRequireGit(env, fd)) argv.push("--no-require-git");
  if (listing.limit !== undefined) argv.push("--max-results", String(listing.limit));
  if (listing.filesOnly) argv.push("--type", "f");
  for (const exclude of listing.exclude ?? []) argv.push("--exclude", excludedName(exclude));
  let pattern = listing.pattern ?? "*";
  if (pattern.includes("/")) {
    argv.push("--full-path");
    pattern = pathGlob(pattern);
  }
  argv.push("--", pattern, root);
  const run = await capture(env, argv, undefined, signal);
  const lines = run.stdout.split("\n").filter((line) => line.length > 0);
  if (run.exitCode !== 0 && lines.length === 0) {
    throw new Error(run.stderr.trim() || `fd exited with code ${run.exitCode}`);
  }
  return lines;
}

/**
 * Absolute paths below `root` on the target that the listing selects, `.gitignore` honoured, hidden files
 * included (pi's find and grep settings). Throws when the target can list neither way.
 */
export async function listTargetFiles(
  env: OutpostEnv,
  root: string,
  listing: TargetListing,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const listFiles = listFilesOf(env);
  if (listFiles !== undefined) {
    const listed = await listWithListFiles(listFiles, root, listing, signal);
    if (listed !== undefined) return listed;
  }
  const listed = await listWithFd(env, root, listing, signal);
  if (listed !== undefined) return listed;
  throw new Error("Cannot list files on the target: its env has no listFiles and neither fd nor fdfind is installed");
}
