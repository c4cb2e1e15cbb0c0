/**
 * The search behind the grep tool, on the target, first of these that can: the env's `searchFiles` (the agent walks
 * and matches, one call), `rg --json` started there through `exec` when the target has ripgrep, else a search
 * through the env itself (the target's file listing, each file streamed line by line, a regular expression per
 * line). All stop at the match limit; none reads the local disk.
 */
import { posix } from "node:path";
import { type OutpostEnv, searchFilesOf, statFollowing } from "./env.js";
import { contextOf } from "./errno.js";
import { findCommand, listTargetFiles } from "./target-files.js";

/** What pi's grep asks for. */
export interface GrepQuery {
  pattern: string;
  /** Absolute path of a directory or a file on the target. */
  searchPath: string;
  isDirectory: boolean;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  /** Matches to collect at most (≥ 1). */
  limit: number;
}

/** One matching line; `lineText` is the line as found (with its newline), when the backend has it as text. */
export interface GrepMatch {
  filePath: string;
  lineNumber: number;
  lineText?: string;
}

/** The matches, how many there were (a match whose path is not UTF-8 counts but is not listed, as in pi). */
export interface GrepFindings {
  matches: GrepMatch[];
  matchCount: number;
  limitReached: boolean;
}

/** Which search ran: tests and users who want to know where a result came from. */
export type GrepBackend = "searchFiles" | "ripgrep" | "env";

/** The failure pi reports when its signal stopped the search. */
export class GrepAborted extends Error {
  constructor() {
    super("Operation aborted");
  }
}

/** One line of `rg --json` output that reports a match. */
interface RgMatchEvent {
  type: "match";
  data?: { path?: { text?: string }; line_number?: number; lines?: { text?: string } };
}

function ripgrepArgv(rg: string, query: GrepQuery): string[] {
  const argv = [rg, "--json", "--line-number", "--color=never", "--hidden"];
  if (query.ignoreCase) argv.push("--ignore-case");
  if (query.literal) argv.push("--fixed-strings");
  if (query.glob) argv.push("--glob", query.glob);
  argv.push("--", query.pattern, query.searchPath);
  return argv;
}

/** Runs ripgrep on the target, stopping it at the match limit. */
async function searchWithRipgrep(
  env: OutpostEnv,
  rg: string,
  query: GrepQuery,
  signal: AbortSignal | undefined,
): Promise<GrepFindings> {
  const findings: GrepFindings = { matches: [], matchCount: 0, limitReached: false };
  const atLimit = new AbortController();
  const stop = signal === undefined ? atLimit.signal : AbortSignal.any([signal, atLimit.signal]);
  let pending = "";
  let stderr = "";
  const onLine = (line: string) => {
    if (line.trim() === "" || findings.matchCount >= query.limit) return;
    let event: RgMatchEvent;
    try {
      event = JSON.parse(line) as RgMatchEvent;
    } catch {
      return;
    }
    if (event.type !== "match") return;
    findings.matchCount++;
    const filePath = event.data?.path?.text;
    const lineNumber = event.data?.line_number;
    if (filePath && typeof lineNumber === "number") {
      findings.matches.push({ filePath, lineNumber, lineText: event.data?.lines?.text });
    }
    if (findings.matchCount >= query.limit) {
      findings.limitReached = true;
      atLimit.abort();
    }
  };
  const result = await env.exec(
    ripgrepArgv(rg, query),
    {
      onOutput: (text, _context, info) => {
        if (info.stream === "stderr") {
          stderr += text;
          return;
        }
        pending += text;
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) onLine(line);
      },
    },
    contextOf(stop),
  );
  if (signal?.aborted) throw new GrepAborted();
  if (!result.ok) {
    if (findings.limitReached && result.error.code === "aborted") return findings;
    throw new Error(`Failed to run ripgrep: ${result.error.message}`);
  }
  onLine(pending);
  const code = result.value.exitCode;
  if (!findings.limitReached && code !== 0 && code !== 1) {
    throw new Error(stderr.trim() || `ripgrep exited with code ${code}`);
  }
  return findings;
}

/** The expression ripgrep's pattern most likely means in JavaScript: Unicode-aware where the syntax allows. */
export function lineMatcher(query: Pick<GrepQuery, "pattern" | "ignoreCase" | "literal">): RegExp {
  const source = query.literal ? query.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : query.pattern;
  const flags = query.ignoreCase ? "i" : "";
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new Error(`regex parse error: ${(error as Error).message}`);
    }
  }
}

/**
 * Searches the target through the env: its listing (gitignore honoured, hidden files included), then each file
 * streamed line by line. A file holding a NUL byte is binary and skipped, as ripgrep skips it in a directory; a
 * search path that is not a regular file (a FIFO) has no lines.
 */
async function searchThroughEnv(
  env: OutpostEnv,
  query: GrepQuery,
  signal: AbortSignal | undefined,
): Promise<GrepFindings> {
  const matcher = lineMatcher(query);
  let files: string[];
  if (query.isDirectory) {
    files = (await listTargetFiles(env, query.searchPath, { pattern: query.glob, filesOnly: true }, signal)).sort();
  } else {
    // A FIFO or device named on its own is not opened: the line reader would wait for a writer, uninterruptibly.
    const info = await statFollowing(env, query.searchPath, signal);
    files = info.ok && info.value?.kind === "file" ? [query.searchPath] : [];
  }
  const findings: GrepFindings = { matches: [], matchCount: 0, limitReached: false };
  const context = contextOf(signal);
  for (const filePath of files) {
    if (signal?.aborted) throw new GrepAborted();
    const opened = await env.openTextLineReader(filePath, context);
    if (!opened.ok) continue;
    const inFile: GrepMatch[] = [];
    let binary = false;
    try {
      for (let lineNumber = 1; findings.matchCount + inFile.length < query.limit; lineNumber++) {
        const line = await opened.value.readLine(context);
        if (!line.ok) {
          if (line.error.code === "aborted") throw new GrepAborted();
          break;
        }
        if (line.value === undefined) break;
        if (line.value.text.includes("\0")) {
          binary = true;
          break;
        }
        if (matcher.test(line.value.text)) {
          inFile.push({ filePath, lineNumber, lineText: `${line.value.text}${line.value.terminated ? "\n" : ""}` });
        }
      }
    } finally {
      await opened.value.close(context);
    }
    if (binary) continue;
    findings.matches.push(...inFile);
    findings.matchCount += inFile.length;
    if (findings.matchCount >= query.limit) {
      findings.limitReached = true;
      break;
    }
  }
  return findings;
}

/** The UTF-8 byte order mark, which ripgrep leaves out of a file's first line. */
const BOM = "\uFEFF";

/**
 * Searches with the env's `searchFiles` (pi's flags: hidden files searched, `.gitignore` honoured) and returns the
 * findings as ripgrep's would be, or why the next backend must search instead: the env has no `searchFiles`, its
 * agent lacks the feature, or the agent refused the call — a pattern its engine does not take (`a**`, which
 * ripgrep takes; look-around, which ripgrep refuses with its own message) or a root that is neither a directory nor
 * a regular file (a FIFO, which ripgrep waits on).
 */
async function searchWithSearchFiles(
  env: OutpostEnv,
  query: GrepQuery,
  signal: AbortSignal | undefined,
): Promise<GrepFindings | { refused: string }> {
  const searchFiles = searchFilesOf(env);
  if (searchFiles === undefined) return { refused: "the env has no searchFiles" };
  const result = await searchFiles(
    query.searchPath,
    query.pattern,
    {
      literal: query.literal === true,
      ignoreCase: query.ignoreCase === true,
      hidden: true,
      ignore: true,
      limit: query.limit,
      ...(query.glob ? { glob: query.glob } : {}),
    },
    contextOf(signal),
  );
  if (!result.ok) {
    if (result.error.code === "aborted" || signal?.aborted) throw new GrepAborted();
    return { refused: result.error.message };
  }
  const findings: GrepFindings = { matches: [], matchCount: 0, limitReached: false };
  for (const match of result.value.matches) {
    findings.matchCount++;
    // ripgrep counts a match behind a name that is not UTF-8 but gives no text path for it, so pi lists none.
    if (match.path.includes("\uFFFD")) continue;
    const filePath = query.isDirectory ? posix.join(query.searchPath, match.path) : query.searchPath;
    let lineText: string | undefined =
      match.line === 1 && match.text.startsWith(BOM) ? match.text.slice(1) : match.text;
    // A line that is not UTF-8 comes from ripgrep as bytes, which pi then reads from the file: so here too.
    if (lineText.includes("\uFFFD")) lineText = undefined;
    findings.matches.push({ filePath, lineNumber: match.line, lineText });
  }
  findings.limitReached = findings.matchCount >= query.limit;
  return findings;
}

/**
 * Searches on the target with the backend chosen (default: `searchFiles` where the env and its agent have it, then
 * ripgrep where the target has it, then the env's own search).
 */
export async function searchTarget(
  env: OutpostEnv,
  query: GrepQuery,
  signal: AbortSignal | undefined,
  backend?: GrepBackend,
): Promise<GrepFindings> {
  if (backend === undefined || backend === "searchFiles") {
    const found = await searchWithSearchFiles(env, query, signal);
    if (!("refused" in found)) return found;
    if (backend === "searchFiles") throw new Error(found.refused);
  }
  const rg = backend === "env" ? undefined : await findCommand(env, ["rg"]);
  if (rg !== undefined) return searchWithRipgrep(env, rg, query, signal);
  if (backend === "ripgrep") throw new Error("ripgrep (rg) is not installed on the target");
  return searchThroughEnv(env, query, signal);
}
