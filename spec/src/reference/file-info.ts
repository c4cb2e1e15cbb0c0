/** `FileInfo` construction from Node stats. */
import type { Stats } from "node:fs";
import { basename } from "node:path";
import type { FileInfo, FileKind } from "./types.js";

/** The kind of a stats object, or `undefined` for kinds `FileInfo` cannot represent (FIFO, socket, device). */
export function fileKind(stats: Stats): FileKind | undefined {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return undefined;
}

/**
 * `FileInfo` for `path` (kept as built, never canonicalized; its basename is the name, `""` for a root), or
 * `undefined` when the kind is not representable.
 */
export function toFileInfo(path: string, stats: Stats): FileInfo | undefined {
  const kind = fileKind(stats);
  if (kind === undefined) return undefined;
  return { name: basename(path), path, kind, size: stats.size, mtimeMs: stats.mtimeMs };
}
