/**
 * `grep`: the lines matching a pattern under a directory on the target (the agent's `searchFiles`), printed as
 * ripgrep prints them into a pipe with `-n`: `path:line:text`, context lines `path-line-text`, `--` between groups
 * that do not touch. Exit status as grep's and rg's: 0 something matched, 1 nothing did, 2 a failure.
 */
import type { FileError, Result, SearchFilesOptions, SearchMatch } from "@outpost/sdk";
import { failed } from "../exit.js";
import { outputClosed } from "../output.js";
import type { Session } from "../target.js";

/** The command's options, as commander gives them. */
export interface GrepOptions {
  glob?: string[];
  ignoreCase?: boolean;
  smartCase?: boolean;
  wordRegexp?: boolean;
  fixedStrings?: boolean;
  context?: number;
  beforeContext?: number;
  afterContext?: number;
  maxCount?: number;
  limit?: number;
  hidden: boolean;
  ignore: boolean;
}

/** grep's statuses: a failure is 2 (main.ts, through `failuresExitWith`), since 1 means "no match" here. */
export const GREP_EXIT = { matched: 0, noMatch: 1, failure: 2 } as const;

/** Prints matches as they come, remembering the last line printed to place ripgrep's `--` separators. */
class MatchPrinter {
  #last: { path: string; line: number } | undefined;
  matched = false;

  constructor(
    /** What goes before each path: the directory as the user wrote it, or nothing (`undefined`: no path at all). */
    private readonly prefix: string | undefined,
    private readonly withContext: boolean,
  ) {}

  print(matches: readonly SearchMatch[]): void {
    let out = "";
    for (const match of matches) {
      this.matched = true;
      const first = match.line - match.before.length;
      if (this.withContext && this.#last !== undefined) {
        const touches = this.#last.path === match.path && this.#last.line + 1 === first;
        if (!touches) out += "--\n";
      }
      match.before.forEach((text, index) => {
        out += this.row(match.path, first + index, "-", text);
      });
      out += this.row(match.path, match.line, ":", match.text);
      match.after.forEach((text, index) => {
        out += this.row(match.path, match.line + 1 + index, "-", text);
      });
      this.#last = { path: match.path, line: match.line + match.after.length };
    }
    if (out !== "" && !outputClosed.aborted) process.stdout.write(out);
  }

  row(path: string, line: number, separator: string, text: string): string {
    const where = this.prefix === undefined ? "" : `${this.prefix}${path}${separator}`;
    return `${where}${line}${separator}${text}\n`;
  }
}

/**
 * How paths are shown, as ripgrep shows them: under the directory as given (`src/` + `a.ts`, `src` + `/a.ts`), bare
 * when no directory was given, and not at all when the one path searched is a file.
 */
async function pathPrefix(session: Session, dir: string | undefined): Promise<string | undefined> {
  if (dir === undefined) return "";
  const context = { abortSignal: outputClosed };
  const canonical = await session.env.canonicalPath(dir, context);
  if (canonical.ok) {
    const info = await session.env.fileInfo(canonical.value, context);
    if (info.ok && info.value.kind === "file") return undefined;
  }
  // A path that cannot be resolved is left for searchFiles to report.
  return dir.endsWith("/") ? dir : `${dir}/`;
}

function searchOptions(options: GrepOptions, printer: MatchPrinter): SearchFilesOptions {
  return {
    literal: options.fixedStrings === true,
    ignoreCase: options.ignoreCase === true,
    smartCase: options.smartCase === true,
    wordRegexp: options.wordRegexp === true,
    glob: options.glob,
    hidden: options.hidden,
    ignore: options.ignore,
    before: options.beforeContext ?? options.context,
    after: options.afterContext ?? options.context,
    maxCount: options.maxCount,
    limit: options.limit,
    onPage: (matches) => printer.print(matches),
  };
}

/** Searches `dir` (default: the target's working directory) and returns grep's exit status. */
export async function grep(
  session: Session,
  pattern: string,
  dir: string | undefined,
  options: GrepOptions,
): Promise<number> {
  const what = `grep ${dir ?? "."}`;
  const prefix = await pathPrefix(session, dir);
  const withContext =
    (options.beforeContext ?? options.context ?? 0) > 0 || (options.afterContext ?? options.context ?? 0) > 0;
  const printer = new MatchPrinter(prefix, withContext);
  const result: Result<{ truncated: boolean; skipped: number }, FileError> = await session.env.searchFiles(
    dir ?? ".",
    pattern,
    searchOptions(options, printer),
    { abortSignal: outputClosed },
  );
  if (!result.ok) throw failed(what, result.error);
  if (result.value.skipped > 0) {
    process.stderr.write(`outpost: grep: skipped ${result.value.skipped} unreadable files or directories\n`);
  }
  if (result.value.truncated) process.stderr.write(`outpost: grep: stopped at the limit of ${options.limit} matches\n`);
  return printer.matched ? GREP_EXIT.matched : GREP_EXIT.noMatch;
}
