/**
 * pi's grep tool searching the target. pi's own grep always starts ripgrep on the local machine, whatever
 * operations it is given; this one keeps pi's parameters, description, rendering and output format, and runs the
 * search where the files are (grep-search.ts).
 */
import { basename as localBasename, relative } from "node:path";
import {
  createGrepToolDefinition,
  DEFAULT_MAX_BYTES,
  formatSize,
  type GrepOperations,
  type GrepToolDetails,
  truncateHead,
  truncateLine,
} from "@mariozechner/pi-coding-agent";
import type { OutpostEnv } from "./env.js";
import { contextOf, toNodeError } from "./errno.js";
import { GrepAborted, type GrepBackend, type GrepFindings, type GrepMatch, searchTarget } from "./grep-search.js";
import { statForPi } from "./ls.js";
import { resolveToolPath } from "./pi-paths.js";

/** pi's defaults: 100 matches, match lines cut at 500 characters. */
const DEFAULT_LIMIT = 100;
const MAX_LINE_LENGTH = 500;

/** Options of the grep tool. */
export interface OutpostGrepOptions {
  /**
   * Force a search backend (default: the env's `searchFiles` where it and its agent have it, then ripgrep where the
   * target has it, then a search through the env).
   */
  backend?: GrepBackend;
}

/** `GrepOperations` (directory test and context-line reads) on the target, for users who build pi's grep themselves. */
export function createOutpostGrepOperations(env: OutpostEnv): GrepOperations {
  return {
    isDirectory: async (path) => (await statForPi(env, path)).isDirectory(),
    readFile: async (path) => {
      const text = await env.readTextFile(path, contextOf(undefined));
      if (!text.ok) throw toNodeError(text.error);
      return text.value;
    },
  };
}

/**
 * Settles with the search, or rejects at once when the signal fires, as pi's tools do: a search step the target
 * cannot interrupt (a blocking open) must not hold the tool call.
 */
function untilAborted<T>(search: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return search;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new GrepAborted());
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    search.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Formats findings exactly as pi's grep does: `path:line: text`, context as `path-line- text`, then notices. */
class GrepFormatter {
  linesTruncated = false;
  readonly #lines = new Map<string, string[]>();

  constructor(
    private readonly ops: GrepOperations,
    private readonly searchPath: string,
    private readonly isDirectory: boolean,
    private readonly contextLines: number,
  ) {}

  displayPath(filePath: string): string {
    if (this.isDirectory) {
      const rel = relative(this.searchPath, filePath);
      if (rel && !rel.startsWith("..")) return rel.replace(/\\/g, "/");
    }
    return localBasename(filePath);
  }

  cut(text: string): string {
    const { text: cut, wasTruncated } = truncateLine(text, MAX_LINE_LENGTH);
    if (wasTruncated) this.linesTruncated = true;
    return cut;
  }

  async fileLines(filePath: string): Promise<string[]> {
    let lines = this.#lines.get(filePath);
    if (lines === undefined) {
      try {
        const content = await this.ops.readFile(filePath);
        lines = content.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n");
      } catch {
        lines = [];
      }
      this.#lines.set(filePath, lines);
    }
    return lines;
  }

  async rows(match: GrepMatch): Promise<string[]> {
    const shown = this.displayPath(match.filePath);
    if (this.contextLines === 0 && match.lineText !== undefined) {
      const line = match.lineText.replace(/\r\n/g, "\n").replace(/\r/g, "").replace(/\n$/, "");
      return [`${shown}:${match.lineNumber}: ${this.cut(line)}`];
    }
    const lines = await this.fileLines(match.filePath);
    if (lines.length === 0) return [`${shown}:${match.lineNumber}: (unable to read file)`];
    const first = this.contextLines > 0 ? Math.max(1, match.lineNumber - this.contextLines) : match.lineNumber;
    const last =
      this.contextLines > 0 ? Math.min(lines.length, match.lineNumber + this.contextLines) : match.lineNumber;
    const rows: string[] = [];
    for (let current = first; current <= last; current++) {
      const text = this.cut((lines[current - 1] ?? "").replace(/\r/g, ""));
      rows.push(current === match.lineNumber ? `${shown}:${current}: ${text}` : `${shown}-${current}- ${text}`);
    }
    return rows;
  }
}

async function formatFindings(
  findings: GrepFindings,
  formatter: GrepFormatter,
  limit: number,
): Promise<{ text: string; details: GrepToolDetails | undefined }> {
  const rows: string[] = [];
  for (const match of findings.matches) rows.push(...(await formatter.rows(match)));
  const truncation = truncateHead(rows.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
  const details: GrepToolDetails = {};
  const notices: string[] = [];
  if (findings.limitReached) {
    notices.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.matchLimitReached = limit;
  }
  if (truncation.truncated) {
    notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
    details.truncation = truncation;
  }
  if (formatter.linesTruncated) {
    notices.push(`Some lines truncated to ${MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
    details.linesTruncated = true;
  }
  const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
  return { text, details: Object.keys(details).length > 0 ? details : undefined };
}

/** pi's grep tool, searching on the env's machine. */
export function createOutpostGrepToolDefinition(
  env: OutpostEnv,
  cwd: string,
  options: OutpostGrepOptions = {},
): ReturnType<typeof createGrepToolDefinition> {
  const ops = createOutpostGrepOperations(env);
  const definition = createGrepToolDefinition(cwd, { operations: ops });
  return {
    ...definition,
    async execute(_toolCallId, params, signal) {
      if (signal?.aborted) throw new Error("Operation aborted");
      const searchPath = resolveToolPath(params.path || ".", cwd);
      let isDirectory: boolean;
      try {
        isDirectory = await ops.isDirectory(searchPath);
      } catch {
        throw new Error(`Path not found: ${searchPath}`);
      }
      const contextLines = params.context && params.context > 0 ? params.context : 0;
      const limit = Math.max(1, params.limit ?? DEFAULT_LIMIT);
      let findings: GrepFindings;
      try {
        findings = await untilAborted(
          searchTarget(env, { ...params, searchPath, isDirectory, limit }, signal, options.backend),
          signal,
        );
      } catch (error) {
        if (error instanceof GrepAborted || signal?.aborted) throw new Error("Operation aborted");
        throw error;
      }
      if (findings.matchCount === 0)
        return { content: [{ type: "text", text: "No matches found" }], details: undefined };
      const formatter = new GrepFormatter(ops, searchPath, isDirectory, contextLines);
      const { text, details } = await formatFindings(findings, formatter, limit);
      return { content: [{ type: "text", text }], details };
    },
  };
}
