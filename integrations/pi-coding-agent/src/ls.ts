/** pi's `LsOperations` over an Outpost env. */
import type { LsOperations } from "@mariozechner/pi-coding-agent";
import type { FileInfo } from "@outpost/sdk";
import type { OutpostEnv } from "./env.js";
import { statFollowing } from "./env.js";
import { contextOf, toNodeError } from "./errno.js";

/** Entries asked for per directory page. */
const PAGE_SIZE = 512;

/** Whether a path exists with its links followed, like `existsSync` (a dangling link does not exist). */
export async function existsFollowing(env: OutpostEnv, path: string): Promise<boolean> {
  const canonical = await env.canonicalPath(path, contextOf(undefined));
  return canonical.ok;
}

/** `stat` with links followed: only `isDirectory()` is used by pi. */
export async function statForPi(env: OutpostEnv, path: string): Promise<{ isDirectory: () => boolean }> {
  const info = await statFollowing(env, path, undefined);
  if (!info.ok) throw toNodeError(info.error, { syscall: "stat", path });
  const isDirectory = info.value?.kind === "directory";
  return { isDirectory: () => isDirectory };
}

/**
 * The entries of a directory, read page by page through the directory reader: like Node's `readdir`, one name that
 * is not UTF-8 does not fail the listing (the reader leaves it out; pi's local `ls` skips it too, as its `stat` of
 * the decoded name fails). Kinds the env cannot represent (FIFOs, sockets) are left out as well.
 */
export async function readDirEntries(env: OutpostEnv, path: string): Promise<FileInfo[]> {
  const context = contextOf(undefined);
  const opened = await env.openDirReader(path, context);
  if (!opened.ok) throw toNodeError(opened.error, { syscall: "scandir", path });
  const reader = opened.value;
  const entries: FileInfo[] = [];
  try {
    for (;;) {
      const page = await reader.next(PAGE_SIZE, context);
      if (!page.ok) throw toNodeError(page.error);
      entries.push(...page.value.entries);
      if (page.value.done) return entries;
    }
  } finally {
    await reader.close(context);
  }
}

/**
 * `LsOperations` for pi's ls tool: existence, kinds and names all come from the env's machine. pi stats every entry
 * it lists; the kinds the directory reader already reported answer those calls without another round trip to the
 * target (links are still followed there). Those kinds are kept only from one `readdir` to the stats that follow
 * it: every ls call starts with `exists`, which forgets them.
 */
export function createOutpostLsOperations(env: OutpostEnv): LsOperations {
  let listedKinds = new Map<string, FileInfo["kind"]>();
  return {
    exists: (path) => {
      listedKinds = new Map();
      return existsFollowing(env, path);
    },
    stat: (path) => {
      const kind = listedKinds.get(path);
      listedKinds.delete(path);
      if (kind === "file" || kind === "directory") return { isDirectory: () => kind === "directory" };
      return statForPi(env, path);
    },
    readdir: async (path) => {
      const entries = await readDirEntries(env, path);
      listedKinds = new Map(entries.map((entry) => [entry.path, entry.kind]));
      return entries.map((entry) => entry.name);
    },
  };
}
