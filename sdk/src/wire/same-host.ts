/**
 * The same-host shortcut: when the agent runs on this machine (`LocalExecutionEnv`), a whole-file read or write
 * moves its bytes through a descriptor of this process instead of through the agent's pipe.
 *
 * The agent still does everything Node's `readFile`/`writeFile` do up to the first byte — resolve, make parents,
 * open with Node's flags, fstat, the abort checkpoints — and names the descriptor of the regular file it opened
 * (`fd` in the reply, Outpost's `handle.fd` feature). This process reopens that descriptor as
 * `/proc/<agent pid>/fd/<n>`, which is the same file even if it was renamed or unlinked since, and reads or
 * writes it with `pread`/`pwrite` (or `write` on an `O_APPEND` file) exactly where the agent would have. A reopen
 * that fails for any reason (another user's agent, `/proc` mounted with `hidepid`) leaves the handle on the
 * protocol path, so results never depend on whether the shortcut was taken.
 */
import { constants, readFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import type { RemoteInfo } from "./agent-hello.js";
import type { Reply } from "./connection-types.js";

/** The agent's `hello.features` name of the descriptors it names for the shortcut. */
export const HANDLE_FD_FEATURE = "handle.fd";

/** How a reopened file is used: for `pread`, or for the writes of `writeFile` ("w") or `appendFile` ("a"). */
export type ReopenMode = "read" | "w" | "a";

const FLAGS: Record<ReopenMode, number> = {
  read: constants.O_RDONLY,
  // The agent's open already created or truncated the file: no O_CREAT, no O_TRUNC here.
  w: constants.O_WRONLY,
  a: constants.O_WRONLY | constants.O_APPEND,
};

/** The parent pid of a process of this machine (from `/proc/<pid>/stat`), or undefined. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // "pid (comm) state ppid ...": the command name may hold spaces and parentheses, so count from the last ")".
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `/proc/<pid>/fd` of the agent, when the shortcut applies: Linux, the agent offers it, and the pid it reports
 * is the process this one spawned (`spawnedPid`) or that process's child (the Linux agent serves from a child of
 * its guardian, see agent-go/internal/guardian). Anything else — a wrapper that started the agent further down,
 * another pid namespace, where the reported pid names some other process — goes through the pipe.
 */
export function sameHostFdDir(spawnedPid: number | undefined, info: RemoteInfo): string | undefined {
  if (process.platform !== "linux" || !info.features.includes(HANDLE_FD_FEATURE)) return undefined;
  if (spawnedPid === undefined || spawnedPid <= 0 || !Number.isInteger(info.pid) || info.pid <= 0) return undefined;
  if (info.pid !== spawnedPid && parentOf(info.pid) !== spawnedPid) return undefined;
  return `/proc/${info.pid}/fd`;
}

/**
 * Reopens the descriptor a reply names, when `fdDir` (the agent's `/proc/<pid>/fd`, or undefined without the
 * shortcut) is given; undefined when there is none or the reopen fails.
 */
export async function reopenAgentFile(
  fdDir: string | undefined,
  reply: Reply,
  mode: ReopenMode,
): Promise<FileHandle | undefined> {
  const fd = reply.json.fd;
  if (fdDir === undefined || typeof fd !== "number" || !Number.isInteger(fd) || fd < 0) return undefined;
  try {
    return await open(`${fdDir}/${fd}`, FLAGS[mode]);
  } catch {
    // Not ours to open: the bytes go through the agent instead.
    return undefined;
  }
}
