/**
 * The search behind the grep tool, on the target: the agent's own `searchFiles` where the env has it, else
 * `rg --json` started there through `exec` when the target has ripgrep, else a search through the env itself (the target's file listing, each file streamed line by line, a
 * regular expression per line). Both stop at the match limit; neither reads the local disk.
 */
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
export type GrepBackend = "agent" | "ripgrep" | "env";

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

/**
 * Searches with the agent's `searchFiles` (spec/semantics.md §23), which has ripgrep's rules. Undefined when the
 * agent cannot answer (an env or agent without it) or refuses the pattern: the next backend then runs, so pi shows
 * ripgrep's own error for a pattern ripgrep refuses too.
 */
async function searchWithAgent(
  env: OutpostEnv,
  query: GrepQuery,
  signal: AbortSignal | undefined,
): Promise<GrepFindings | undefined> {
  const searchFiles = searchFilesOf(env);
  if (searchFiles === undefined) return undefined;
  const result = await searchFiles(
    query.searchPath,
    query.pattern,
    {
      literal: query.literal === true,
      ignoreCase: query.ignoreCase === true,
      ...(query.glob ? { glob: query.glob } : {}),
      limit: query.limit,
    },
    contextOf(signal),
  );
  if (signal?.aborted) throw new GrepAborted();
  if (!result.ok) {
    if (result.error.code === "aborted") throw new GrepAborted();
    return undefined;
  }
  const found = result.value.matches;
  // As pi with ripgrep: a match in a file whose name is not UTF-8 (decoded with U+FFFD) counts but is not listed.
  const matches = found
    .filter((match) => !match.path.includes("\uFFFD"))
    .map((match) => ({
      filePath: query.isDirectory ? joinTarget(query.searchPath, match.path) : query.searchPath,
      lineNumber: match.line,
      lineText: `${match.text}\n`,
    }));
  // As the ripgrep backend: the limit is reached when that many matches were found.
  return { matches, matchCount: found.length, limitReached: found.length >= query.limit };
}

/** A path below a directory on the target, joined with the directory's own separator style. */
function joinTarget(dir: string, relative: string): string {
  const separator = dir.includes("\\") && !dir.includes("/") ? "\\" : "/";
  const base = dir.endsWith("/") || dir.endsWith("\\") ? dir : `${dir}${separator}`;
  return base + (separator === "/" ? relative : relative.replaceAll("/", separator));
}

/**
 * Searches on the target with the backend chosen (default: the agent's `searchFiles`, else ripgrep where the
 * target has it, else the env).
 */
export async function searchTarget(
  env: OutpostEnv,
  query: GrepQuery,
  signal: AbortSignal | undefined,
  backend?: GrepBackend,
): Promise<GrepFindings> {
  if (backend === undefined || backend === "agent") {
    const found = await searchWithAgent(env, query, signal);
    if (found !== undefined) return found;
    if (backend === "agent") throw new Error("the env's agent cannot search (no searchFiles)");
  }
  const rg = backend === "env" ? undefined : await findCommand(env, ["rg"]);
  if (rg !== undefined) return searchWithRipgrep(env, rg, query, signal);
  if (backend === "ripgrep") throw new Error("ripgrep (rg) is not installed on the target");
  return searchThroughEnv(env, query, signal);
}
