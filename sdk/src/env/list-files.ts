/**
 * The SDK half of `listFiles` (spec/semantics.md §19): option validation, the feature check, reassembling the
 * agent's pages in order, `onPage` delivery and the abort checkpoints between pages. The agent walks the tree.
 */

import { FileError } from "../contract/errors.js";
import { err, ok, type Result } from "../contract/result.js";
import type { Connection } from "../wire/connection.js";
import { requestPages } from "./paged-request.js";

/** Options of `listFiles`. */
export interface ListFilesOptions {
  /** Gitignore-style patterns a file must match (`*.ts`, `src/**`, `!*.d.ts`); default: every file. */
  glob?: string | readonly string[];
  /** List dot-files and descend dot-directories (default true). */
  hidden?: boolean;
  /** Honour `.gitignore`, `.ignore` and `.git/info/exclude` (default true); `.git` is never listed. */
  ignore?: boolean;
  /** List at most this many paths (a positive safe integer); `truncated` tells whether more exist. */
  limit?: number;
  /** Receives the paths page by page, in order; the result's `paths` is then empty. */
  onPage?: (paths: string[]) => void;
}

/** What `listFiles` returns. */
export interface ListFilesResult {
  /** Paths relative to the root, `/`-separated, in byte order (empty when `onPage` took them). */
  paths: string[];
  /** Whether `limit` left paths out. */
  truncated: boolean;
}

/** The feature name an agent announces in `hello` when it serves `listFiles`. */
export const LIST_FILES_FEATURE = "listFiles";

/** The request fields of validated options. */
interface WireOptions {
  glob?: string[];
  hidden: boolean;
  ignore: boolean;
  limit?: number;
}

/** Checks the options in the order LF3 gives, failing `invalid` with a message naming the first bad one. */
export function validateListFilesOptions(
  options: ListFilesOptions | undefined,
  root: string,
): Result<WireOptions, FileError> {
  const invalid = (message: string) => err(new FileError("invalid", message, root));
  const glob = options?.glob;
  let globs: string[] | undefined;
  if (typeof glob === "string") globs = [glob];
  else if (Array.isArray(glob) && glob.length > 0 && glob.every((item) => typeof item === "string")) globs = [...glob];
  else if (glob !== undefined) return invalid("glob must be a string or a non-empty array of strings");
  const hidden = options?.hidden ?? true;
  if (typeof hidden !== "boolean") return invalid("hidden must be a boolean");
  const ignore = options?.ignore ?? true;
  if (typeof ignore !== "boolean") return invalid("ignore must be a boolean");
  const limit = options?.limit;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    return invalid("limit must be a positive safe integer");
  }
  if (options?.onPage !== undefined && typeof options.onPage !== "function") {
    return invalid("onPage must be a function");
  }
  return ok({ ...(globs ? { glob: globs } : {}), hidden, ignore, ...(limit !== undefined ? { limit } : {}) });
}

/** Splits a page payload: paths each followed by one NUL byte. */
function pagePaths(payload: Uint8Array): string[] {
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8");
  const paths = text.split("\0");
  paths.pop();
  return paths;
}

/**
 * Lists `root` (resolved, checked for NUL bytes) through the agent. Throws a `FileError`: the agent's failure
 * mapped with `root` as fallback path, `aborted` at a checkpoint between pages, or `unknown` when `onPage` threw.
 */
export async function listFilesOnAgent(
  connection: Connection,
  root: string,
  wire: WireOptions,
  onPage: ((paths: string[]) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<ListFilesResult> {
  const { items, json } = await requestPages(
    connection,
    "listFiles",
    { path: root, ...wire },
    root,
    pagePaths,
    onPage,
    signal,
  );
  return { paths: items, truncated: json.truncated === true };
}

/** The failure of `listFiles` against an agent that does not announce the feature (an upstream daemon). */
export function notSupported(root: string): FileError {
  return new FileError("not_supported", "the agent does not support listFiles", root);
}
