/**
 * `listDir` over the agent's `opendir`/`readdir`: every entry is read first (as libuv's `scandir` does), sorted by
 * the raw bytes of its name on POSIX (libuv sorts with `strcmp`; Windows keeps the file system's order), and then
 * turned into `FileInfo`s in that order, where the first entry that could not be lstat'ed fails the whole listing.
 */
import { FileError } from "../contract/errors.js";
import { abortedError, fileErrorFromFields, isAborted, toFileError } from "../contract/file-errors.js";
import { basenameOnAgent, isWindows, type PathRules, resolveOnAgent } from "../contract/paths.js";
import type { FileInfo } from "../contract/types.js";
import { fileInfo, isRepresentable, nameBytes, parseEntries, type WireEntry } from "../wire/wire.js";
import { type AgentLink, type AgentReply, RemoteHandle } from "./handle.js";

/** Entries asked for per `readdir` request. */
export const LIST_PAGE = 1000;

/** Orders entries like libuv's `scandir`: by the bytes of their names on disk. */
export function compareRawNames(left: Pick<WireEntry, "name" | "raw">, right: Pick<WireEntry, "name" | "raw">): number {
  return Buffer.compare(nameBytes(left), nameBytes(right));
}

/**
 * Node lists a directory with one `scandir`; the agent opens it with `opendir`. Codes and paths are the same, and
 * the message is made to name Node's system call too, since tools show it.
 */
function asScandirFailure(error: unknown, path: string): FileError {
  const mapped = toFileError(error, path);
  const message = mapped.message.replace(", opendir '", ", scandir '");
  if (message === mapped.message) return mapped;
  return new FileError(mapped.code, message, mapped.path, mapped.cause instanceof Error ? mapped.cause : undefined);
}

/** Reads every entry of the directory through one handle, closed afterwards. */
async function readAllEntries(link: AgentLink, path: string): Promise<WireEntry[]> {
  let opened: AgentReply;
  try {
    opened = await link.request("opendir", { path });
  } catch (error) {
    throw asScandirFailure(error, path);
  }
  const handle = RemoteHandle.fromReply(link, opened);
  try {
    const entries: WireEntry[] = [];
    for (;;) {
      const reply = await handle.request("readdir", { max: LIST_PAGE });
      const page = parseEntries(reply.json);
      entries.push(...page);
      if (reply.json.done === true || page.length === 0) return entries;
    }
  } finally {
    await handle.close();
  }
}

/**
 * Lists a directory like `NodeExecutionEnv.listDir`. Throws the first entry's failure (with the entry's path) or an
 * aborted error (with the directory's path) when the signal fires while the entries are being turned into results.
 */
export async function listDirectory(
  link: AgentLink,
  rules: PathRules,
  path: string,
  signal: AbortSignal | undefined,
): Promise<FileInfo[]> {
  const entries = await readAllEntries(link, path);
  if (!isWindows(rules)) entries.sort(compareRawNames);
  const infos: FileInfo[] = [];
  for (const entry of entries) {
    if (isAborted(signal)) throw abortedError(path);
    const entryPath = resolveOnAgent(rules, path, entry.name);
    if (entry.error !== undefined) throw fileErrorFromFields(entry.error, entryPath);
    if (entry.info === undefined || !isRepresentable(entry.info)) continue;
    infos.push(fileInfo(entry.info, basenameOnAgent(rules, entryPath), entryPath));
  }
  return infos;
}
