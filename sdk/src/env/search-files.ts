/**
 * The SDK half of `searchFiles` (spec/semantics.md §23): option validation, the feature check, and the agent's pages
 * of matches reassembled in order (paged-request.ts). The agent walks the tree and matches.
 */

import { FileError } from "../contract/errors.js";
import { err, ok, type Result } from "../contract/result.js";
import type { Connection } from "../wire/connection.js";
import { requestPages } from "./paged-request.js";

/** Options of `searchFiles`. */
export interface SearchFilesOptions {
  /** The pattern is a fixed string, not a regular expression (`rg -F`). */
  literal?: boolean;
  /** Match case-insensitively (`rg -i`). */
  ignoreCase?: boolean;
  /** Case-insensitive when the pattern has no uppercase letter (`rg -S`); `ignoreCase` wins. */
  smartCase?: boolean;
  /** Only matches with no word character right before and after them (`rg -w`). */
  wordRegexp?: boolean;
  /** Gitignore-style patterns a file must match, as `listFiles`' `glob`. */
  glob?: string | readonly string[];
  /** Search dot-files and dot-directories (default true). */
  hidden?: boolean;
  /** Honour `.gitignore`, `.ignore` and `.git/info/exclude` (default true). */
  ignore?: boolean;
  /** Context lines before each match (0 to 1000, default 0). */
  before?: number;
  /** Context lines after each match (0 to 1000, default 0). */
  after?: number;
  /** At most this many matching lines per file. */
  maxCount?: number;
  /** At most this many matches overall; `truncated` tells whether more exist. */
  limit?: number;
  /** Receives the matches page by page, in order; the result's `matches` is then empty. */
  onPage?: (matches: SearchMatch[]) => void;
}

/** One matching line. */
export interface SearchMatch {
  /** The file, relative to the searched directory (`/`-separated), or the file's name when a file was searched. */
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line without its LF (a CR before it stays), invalid UTF-8 decoded with U+FFFD. */
  text: string;
  /** Each match in the line, as byte offsets in the line's raw bytes. */
  submatches: { start: number; end: number }[];
  /** Context lines right before the line (the lines `line - before.length` … `line - 1`). */
  before: string[];
  /** Context lines right after the line. */
  after: string[];
}

/** What `searchFiles` returns. */
export interface SearchFilesResult {
  /** The matches in path order, then line order (empty when `onPage` took them). */
  matches: SearchMatch[];
  /** Whether `limit` left matches out. */
  truncated: boolean;
  /** Files and directories skipped because they could not be read (or have a line over 8 MiB). */
  skipped: number;
}

/** The feature name an agent announces in `hello` when it serves `searchFiles`. */
export const SEARCH_FILES_FEATURE = "searchFiles";

/** The request fields of validated options. */
type WireOptions = Record<string, unknown>;

/** Checks the pattern and the options in the order SF1/SF3 give, failing `invalid` naming the first bad one. */
export function validateSearchFilesOptions(
  pattern: unknown,
  options: SearchFilesOptions | undefined,
  root: string,
): Result<WireOptions, FileError> {
  const invalid = (message: string) => err(new FileError("invalid", message, root));
  if (typeof pattern !== "string") return invalid("pattern must be a string");
  const wire: WireOptions = { pattern };
  for (const name of ["literal", "ignoreCase", "smartCase", "wordRegexp"] as const) {
    const value = options?.[name];
    if (value !== undefined && typeof value !== "boolean") return invalid(`${name} must be a boolean`);
    if (value) wire[name] = true;
  }
  const glob = options?.glob;
  if (typeof glob === "string") wire.glob = [glob];
  else if (Array.isArray(glob) && glob.length > 0 && glob.every((item) => typeof item === "string")) {
    wire.glob = [...glob];
  } else if (glob !== undefined) return invalid("glob must be a string or a non-empty array of strings");
  for (const name of ["hidden", "ignore"] as const) {
    const value = options?.[name];
    if (value !== undefined && typeof value !== "boolean") return invalid(`${name} must be a boolean`);
    wire[name] = value ?? true;
  }
  for (const name of ["before", "after"] as const) {
    const value = options?.[name];
    if (value === undefined) continue;
    if (!(Number.isSafeInteger(value) && value >= 0 && value <= 1000)) {
      return invalid(`${name} must be an integer from 0 to 1000`);
    }
    if (value > 0) wire[name] = value;
  }
  for (const name of ["maxCount", "limit"] as const) {
    const value = options?.[name];
    if (value === undefined) continue;
    if (!(Number.isSafeInteger(value) && value > 0)) return invalid(`${name} must be a positive safe integer`);
    wire[name] = value;
  }
  if (options?.onPage !== undefined && typeof options.onPage !== "function") {
    return invalid("onPage must be a function");
  }
  return ok(wire);
}

/** Decodes a page payload: a JSON array of matches. */
function pageMatches(payload: Uint8Array): SearchMatch[] {
  return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8"));
}

/** Searches `root` (resolved, checked for NUL bytes) through the agent; throws a `FileError` as `requestPages`. */
export async function searchFilesOnAgent(
  connection: Connection,
  root: string,
  wire: WireOptions,
  onPage: ((matches: SearchMatch[]) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<SearchFilesResult> {
  const { items, json } = await requestPages(
    connection,
    "searchFiles",
    { path: root, ...wire },
    root,
    pageMatches,
    onPage,
    signal,
  );
  return {
    matches: items,
    truncated: json.truncated === true,
    skipped: typeof json.skipped === "number" ? json.skipped : 0,
  };
}

/** The failure of `searchFiles` against an agent that does not announce the feature (an upstream daemon). */
export function searchNotSupported(root: string): FileError {
  return new FileError("not_supported", "the agent does not support searchFiles", root);
}
