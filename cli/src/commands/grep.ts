/**
 * `outpost grep`: the agent's searchFiles, printed as ripgrep prints (`path:line:text`, context lines as
 * `path-line-text`, `--` between groups), exiting as ripgrep exits: 0 when something matched, 1 when nothing did,
 * 2 on an error.
 */
import type { SearchFilesOptions, SearchMatch } from "@outpost/sdk";
import { CliFailure, failed } from "../exit.js";
import { outputClosed } from "../output.js";
import type { Session } from "../target.js";

/** The options `outpost grep` takes. */
export interface GrepOptions {
  glob?: string[];
  ignoreCase?: boolean;
  smartCase?: boolean;
  fixedStrings?: boolean;
  wordRegexp?: boolean;
  context?: number;
  limit?: number;
  hidden: boolean;
  ignore: boolean;
}

/** Exit codes of `outpost grep`, ripgrep's. */
export const GREP_EXIT = { matched: 0, none: 1, error: 2 } as const;

/** The lines one match prints: its context before, itself, its context after. */
export function grepLines(match: SearchMatch, prefix: string): string[] {
  const path = prefix + match.path;
  const lines: string[] = [];
  const first = match.line - match.before.length;
  for (const [i, text] of match.before.entries()) lines.push(`${path}-${first + i}-${text}`);
  lines.push(`${path}:${match.line}:${match.text}`);
  for (const [i, text] of match.after.entries()) lines.push(`${path}-${match.line + 1 + i}-${text}`);
  return lines;
}

/** Searches `dir` (default the target's working directory) and prints the matches; returns the exit code. */
export async function grep(session: Session, pattern: string, dir: string | undefined, options: GrepOptions) {
  const context = { abortSignal: undefined };
  const root = dir ?? "";
  // ripgrep names a match by the path it was given: the directory joined with the file, or the file itself.
  let prefix = "";
  let fileRoot = false;
  if (dir !== undefined) {
    const info = await session.env.fileInfo(dir, context);
    if (!info.ok) throw asGrepError(failed(`grep ${dir}`, info.error));
    fileRoot = info.value.kind === "file";
    prefix = fileRoot ? "" : dir.endsWith("/") ? dir : `${dir}/`;
  }
  const withContext = (options.context ?? 0) > 0;
  let last: { path: string; line: number } | undefined;
  let matched = 0;
  const print = (matches: SearchMatch[]) => {
    const out: string[] = [];
    for (const match of matches) {
      if (fileRoot) match.path = dir ?? match.path;
      const first = match.line - match.before.length;
      if (withContext && last !== undefined && (last.path !== match.path || last.line + 1 < first)) out.push("--");
      out.push(...grepLines(match, prefix));
      last = { path: match.path, line: match.line + match.after.length };
    }
    matched += matches.length;
    if (!outputClosed.aborted) process.stdout.write(`${out.join("\n")}\n`);
  };
  const search: SearchFilesOptions = {
    glob: options.glob,
    ignoreCase: options.ignoreCase,
    smartCase: options.smartCase,
    literal: options.fixedStrings,
    wordRegexp: options.wordRegexp,
    before: options.context,
    after: options.context,
    limit: options.limit,
    hidden: options.hidden,
    ignore: options.ignore,
    onPage: print,
  };
  // The search stops when the reader of stdout goes away (| head), as find's listing does.
  const result = await session.env.searchFiles(root, pattern, search, { abortSignal: outputClosed });
  if (!result.ok) throw asGrepError(failed(`grep ${pattern}`, result.error));
  if (result.value.truncated) process.stderr.write(`outpost: grep: stopped at the limit of ${options.limit} matches\n`);
  if (result.value.skipped > 0) {
    process.stderr.write(`outpost: grep: ${result.value.skipped} files or directories could not be read\n`);
  }
  return matched > 0 ? GREP_EXIT.matched : GREP_EXIT.none;
}

/** A failure with ripgrep's exit status for an error (2), except an interruption (which keeps its own). */
function asGrepError(failure: CliFailure): CliFailure {
  if (failure.code === "aborted") return failure;
  return new CliFailure(failure.message, failure.code, GREP_EXIT.error);
}
