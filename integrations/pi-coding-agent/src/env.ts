/** The env the adapters take, and the few env calls several of them share. */
import type { ExecutionEnv, FileError, FileInfo, Result } from "@outpost/sdk";

/** Options of Outpost's `listFiles` (spec/semantics.md §19), which not every env has. */
export interface ListFilesOptions {
  glob?: string | readonly string[];
  hidden?: boolean;
  ignore?: boolean;
  limit?: number;
}

/** What `listFiles` returns: paths relative to the root, `/`-separated. */
export interface ListFilesResult {
  paths: string[];
  truncated: boolean;
}

/** An env that may list a tree on the target in one call. */
export interface ListFilesCapable {
  listFiles(
    path: string,
    options: ListFilesOptions | undefined,
    context: { abortSignal: AbortSignal | undefined },
  ): Promise<Result<ListFilesResult, FileError>>;
}

/** Options of Outpost's `searchFiles` (spec/semantics.md §23) that pi's grep uses. */
export interface SearchFilesOptions {
  literal?: boolean;
  ignoreCase?: boolean;
  glob?: string | readonly string[];
  limit?: number;
}

/** What `searchFiles` returns, as far as pi's grep reads it. */
export interface SearchFilesResult {
  matches: { path: string; line: number; text: string }[];
  truncated: boolean;
}

/** An env whose agent searches a tree on the target in one call. */
export interface SearchFilesCapable {
  searchFiles(
    path: string,
    pattern: string,
    options: SearchFilesOptions | undefined,
    context: { abortSignal: AbortSignal | undefined },
  ): Promise<Result<SearchFilesResult, FileError>>;
}

/** Any Outpost env (Local, pipe, SSH): Durable's `ExecutionEnv`, with `listFiles` and `searchFiles` where it has them. */
export type OutpostEnv = ExecutionEnv & Partial<ListFilesCapable> & Partial<SearchFilesCapable>;

/** The env's `searchFiles`, when it has one. */
export function searchFilesOf(env: OutpostEnv): SearchFilesCapable["searchFiles"] | undefined {
  return typeof env.searchFiles === "function" ? env.searchFiles.bind(env) : undefined;
}

/** The env's `listFiles`, when it has one (feature detection: older envs and plain Durable envs lack it). */
export function listFilesOf(env: OutpostEnv): ListFilesCapable["listFiles"] | undefined {
  return typeof env.listFiles === "function" ? env.listFiles.bind(env) : undefined;
}

/**
 * Metadata of a path with its final links followed, like Node's `stat`: the link is resolved on the target
 * (`canonicalPath`), then its target is described. Kinds the env cannot represent (FIFOs, sockets, devices) give
 * `undefined`: the path exists but is neither a file nor a directory.
 */
export async function statFollowing(
  env: OutpostEnv,
  path: string,
  signal: AbortSignal | undefined,
): Promise<Result<FileInfo | undefined, FileError>> {
  const context = { abortSignal: signal };
  const canonical = await env.canonicalPath(path, context);
  if (!canonical.ok) return canonical;
  const info = await env.fileInfo(canonical.value, context);
  // `invalid` from `fileInfo` of an existing, resolved path means a kind Durable cannot represent (I6).
  if (!info.ok && info.error.code === "invalid") {
    return { ok: true, value: undefined };
  }
  return info;
}
