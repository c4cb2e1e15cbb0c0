/**
 * Faults the rig's tests make on the path (spec/semantics.md AL5, AL6): cutting the link (iptables DROP in the
 * server namespace) and restoring it, and listing what runs on the target side besides sshd (what a cut-off agent
 * must not leave behind).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { rig } from "./link.js";

const run = promisify(execFile);

/** The client's silence limit (spec/protocol.md section 4) plus the SSH connect timeout of a reconnect, plus slack. */
export const LOST_BOUND_MS = 30_000 + 15_000 + 5_000;
/** How long the agent's own silence limit may take to end it once the link is cut: 30 s, checked every 5 s. */
export const AGENT_SILENCE_MS = 35_000 + 5_000;

/** Drops (or lets through again) every packet in and out of the server namespace. */
export async function cutLink(on: boolean): Promise<void> {
  const { serverNs } = rig();
  for (const chain of ["INPUT", "OUTPUT"]) {
    await run("ip", ["netns", "exec", serverNs, "iptables", on ? "-I" : "-D", chain, "-j", "DROP"]);
  }
}

/** Whether the link is cut right now (a DROP rule of {@link cutLink} is in the server namespace's INPUT chain). */
export async function linkCut(): Promise<boolean> {
  const { stdout } = await run("ip", ["netns", "exec", rig().serverNs, "iptables", "-S", "INPUT"]);
  return /^-A INPUT -j DROP$/m.test(stdout);
}

/** Restores the link if a test left it cut (for `afterAll`, whatever happened). */
export async function restoreLink(): Promise<void> {
  while (await linkCut()) await cutLink(false);
}

/**
 * The processes in the server namespace other than sshd's (its listener and its session processes): the agents,
 * their guardians and the commands they run, as `pid args` lines. Zombies are left out (they have no namespace).
 */
export async function targetProcesses(): Promise<string[]> {
  const { stdout } = await run("ip", ["netns", "pids", rig().serverNs]);
  const found: string[] = [];
  for (const pid of stdout.split(/\s+/).filter((word) => word !== "")) {
    let args: string;
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      continue; // exited meanwhile
    }
    if (args === "" || /^(\/usr\/sbin\/)?sshd\b/.test(args)) continue;
    found.push(`${pid} ${args}`);
  }
  return found;
}
