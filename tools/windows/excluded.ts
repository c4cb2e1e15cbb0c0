/**
 * Conformance cases the Windows flavour leaves out under Wine, each named with the rule it tests and why it
 * cannot be compared there. A case listed here is reported as excluded by both targets, never as a pass; an entry
 * that matches no case fails the run (so the list cannot go stale). Everything else must pass on both targets.
 *
 * Reasons fall in four groups: the case's expectations are POSIX's and the Windows rule they would test is
 * not written as a case yet ("POSIX expectations"); Wine differs from Windows (spec/semantics.md, "Windows under
 * Wine"); the stand-in shell lacks a utility the case needs or behaves unlike Git Bash; the case tests a POSIX-only
 * mechanism.
 */

/** One excluded case: its exact name, the rules it tests, and why it is left out. */
export interface Exclusion {
  name: string;
  rule: string;
  reason: string;
}

const posixPaths =
  "POSIX expectations: literal POSIX paths; their win32 counterparts are the Windows case " +
  "'paths resolve and join in the win32 flavour' (WIN1 P2 P3 P4 P5 P6 P11 P12 P14)";
const noStat = "the stand-in shell has no stat or chmod (and Windows has no mode bits to set)";
const standInJobs =
  "the stand-in shell runs a background job inside its own process (mvdan.cc/sh), so the job ends when the " +
  "shell exits and $! names no process (Wine blind spot: the shell); seen on both targets:";
const shellHome =
  "the stand-in shell sets HOME to the user's home directory when it is unset (mvdan.cc/sh's interp does, as a " +
  "shell variable), so the case's HOME expansions see it: seen on both targets";

/** The excluded cases, in suite order. */
export const exclusions: Exclusion[] = [
  { name: "absolutePath expands ~ and ~/ to the home directory, but not ~user", rule: "P2 P3 P13", reason: posixPaths },
  { name: "absolutePath turns file:// URLs into paths like Node's fileURLToPath", rule: "P4", reason: posixPaths },
  { name: "absolutePath keeps file:// URLs Node refuses as relative names", rule: "P4 ND3", reason: posixPaths },
  {
    name: "absolutePath resolves relative paths, .., trailing slashes and the empty path textually",
    rule: "P1 P5 P6 P13",
    reason: posixPaths,
  },
  { name: "joinPath joins like Node's path.join, without the cwd", rule: "P14", reason: posixPaths },
  { name: "env.cwd is used as assigned, at call time", rule: "P6 P9", reason: posixPaths },
  { name: "a relative cwd resolves against the host process's working directory", rule: "P6 P9", reason: posixPaths },
  {
    name: "directory reader of a directory removed after opening ends without error",
    rule: "D6 ND6",
    reason:
      "Wine's FindFirstFileW (Node's opendir, and the agent's) does not share delete: removing a directory being " +
      "read fails EBUSY on both targets (Wine blind spot)",
  },
  {
    name: "writeFile reports the parent path when creating parents fails",
    rule: "W2 E2 E5 W1 W3",
    reason: "Wine fails appending to a directory EBADF at the write (Wine blind spot); its below-a-file steps pass",
  },
  {
    name: "renameFile replaces files, keeps hard links and reports the source path",
    rule: "W6 E5",
    reason: "POSIX expectations: a file over a directory is is_directory on POSIX, EPERM on Windows (WIN2)",
  },
  {
    name: "fileInfo describes files and directories without following anything",
    rule: "M1 I1 I2 I3 I4 I5",
    reason: noStat,
  },
  {
    name: "listDir lists names in byte order with their metadata",
    rule: "D1 D2 I1 I2 I3 I4",
    reason: "POSIX expectations: byte order; Windows keeps the file system's order (WIN3)",
  },
  {
    name: "methods that need a file report a directory as is_directory",
    rule: "E2 E4 W1 W4 W5 R10",
    reason: "Wine fails appending to a directory EBADF at the write (Wine blind spot)",
  },
  {
    name: "createTempFile whose file cannot be created fails naming the file and leaves its directory",
    rule: "T3 T5",
    reason:
      "Wine fails a 300-character file name ENOENT (not_found), not ENAMETOOLONG (unknown): seen the same on both " +
      "targets, the reference's Windows Node and the agent (Wine blind spot)",
  },
  {
    name: "a command's stdout and stderr are sockets, not pipes or terminals",
    rule: "X13",
    reason: "POSIX-only: Node gives a Windows child named pipes, there are no sockets to test for",
  },
  {
    name: "a missing working directory is a spawn_error naming it",
    rule: "X4 X11 X14 X32 P9 ND4",
    reason: "POSIX expectations: the message names a POSIX path (/bin/sh); Windows' message is WIN10's, not switched",
  },
  {
    name: "a custom shellPath runs string commands with -c",
    rule: "X6 X9",
    reason: "POSIX expectations: the custom shell is /bin/sh",
  },
  {
    name: "cleanup kills running commands, which settle with exit code 137",
    rule: "C1 X24",
    reason: "POSIX-only: 137 is SIGKILL's; taskkill /F gives exit code 1 (WIN8)",
  },
  {
    name: "a background descendant holding the pipes does not keep exec waiting",
    rule: "X22 X23",
    reason: `${standInJobs} 'the descendant is not killed by a normal exit' (the pid of $! is not running)`,
  },
  {
    name: "output written after exit by a descendant is still collected",
    rule: "X22",
    reason: `${standInJobs} stdout is 'early\\n', the job's 'late' is never written`,
  },
  {
    name: "env merging: shellEnv over the host env, options.env over both, empty strings shadow",
    rule: "X12 ND1",
    reason: `${shellHome} '|only|unset|home' where '|only|unset|' was expected (inheritEnv false)`,
  },
  {
    name: "env merging: an undefined shellEnv value removes the inherited variable",
    rule: "X12",
    reason: `${shellHome} 'C:\\users\\root' where 'unset' was expected`,
  },
  {
    name: "an aborted exec kills the whole process group",
    rule: "X16 X17",
    reason: "POSIX-only: process groups; Windows kills the tree with taskkill /T (WIN8), and the case reads $!",
  },
  {
    name: "a timeout or abort while a descendant keeps writing after exit fails the command",
    rule: "X18 X22",
    reason: `${standInJobs} the writer stops with the shell, so the command exits 0 instead of timing out`,
  },
  {
    name: "exec resolves options.cwd like any path and runs relative programs from it",
    rule: "X4 X10 P3",
    reason: `${noStat}; a relative program is found with .com/.exe on Windows (WIN10), not as a script`,
  },
  {
    name: "a custom shellPath that exists but cannot run is a spawn_error",
    rule: "X6 X14",
    reason: "POSIX expectations: the program that cannot run is /etc/passwd",
  },
  {
    name: "a spilled command keeps its whole output, however large",
    rule: "X26 X27 X29",
    reason:
      "POSIX expectations: the output comes from /dev/zero through tr, and Windows has no /dev/zero (the stand-in " +
      "has no tr either); the command writes nothing to spill, so both targets fail 'a spillPath'",
  },
  {
    name: "a window larger than a frame loses nothing",
    rule: "XW3 XW4 XW5",
    reason:
      "POSIX expectations: the output comes from /dev/zero through tr, and Windows has no /dev/zero (the stand-in " +
      "has no tr either); only the error's 135 bytes arrive on both targets, not 40,000,003",
  },
  {
    name: "watch: a change set too large for one frame is still covered, and the watcher goes on",
    rule: "WA15 WA12",
    reason:
      "POSIX expectations: its file names are made of control characters (U+0001), which Windows refuses in " +
      "names, so writing the tree fails on both targets ('writeFile staging/tree//')",
  },
];

/** Cases excluded by name prefix (none at present; the watch cases all run, with their own watch options). */
export const excludedPrefixes: { prefix: string; rule: string; reason: string }[] = [];

/** Why a case is excluded, if it is. */
export function exclusionOf(name: string): { rule: string; reason: string } | undefined {
  const exact = exclusions.find((exclusion) => exclusion.name === name);
  if (exact) return exact;
  return excludedPrefixes.find((exclusion) => name.startsWith(exclusion.prefix));
}
