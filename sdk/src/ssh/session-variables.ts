/**
 * The variables sshd sets that mark a session as "started by SSH". They are removed from the agent's environment,
 * so its commands run as they would under a `NodeExecutionEnv` on that machine (Debian's bash reads `~/.bashrc` in
 * every `bash -c` while `SSH_CLIENT` is set): spec/semantics.md rule SSH1.
 *
 * A file of its own, with no `ssh2` import: `connect.ts` re-exports it, and the published declarations a host
 * compiles must not reach `ssh2`'s types (the package test compiles them strictly without `@types/ssh2`).
 */
export const SSH_SESSION_VARIABLES = ["SSH_CLIENT", "SSH_CONNECTION", "SSH2_CLIENT", "SSH_TTY"] as const;
