/**
 * Finding processes a test run left behind (Linux `/proc`; elsewhere the scan finds nothing).
 *
 * A test file marks everything it starts — agents and commands — with an environment variable whose value is
 * unique to the run (`newProcessMarker`), and may also name directories its commands run in. A process that is
 * still alive (zombies do not count: they are dead, waiting for their parent) and carries the marker in its
 * initial environment, or whose cwd is inside one of the directories, is a leftover.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** A variable that marks every process of one test run. */
export interface ProcessMarker {
  readonly name: string;
  /** Unique per run, so parallel runs never see each other's processes. */
  readonly value: string;
}

/** What makes a process a leftover of a run: its marker and, optionally, directories its commands run in. */
export interface LeftoverQuery {
  readonly marker: ProcessMarker;
  /** A process whose cwd is one of these directories, or inside one, counts too. */
  readonly dirs?: readonly string[];
}

/** A fresh marker named `name` (default `OUTPOST_TEST_MARKER`) with a random value. */
export function newProcessMarker(name = "OUTPOST_TEST_MARKER"): ProcessMarker {
  return { name, value: randomUUID() };
}

/** The marker as an environment fragment, for `env`/`shellEnv` options. */
export function markerEnv(marker: ProcessMarker): Record<string, string> {
  return { [marker.name]: marker.value };
}

/** An argv prefix that starts the rest of the argv with the marker in its environment (`env NAME=value`). */
export function markedArgv(marker: ProcessMarker, argv: readonly string[]): string[] {
  return ["env", `${marker.name}=${marker.value}`, ...argv];
}

function processFacts(pid: string): { state: string; environ: string; cwd: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return { state, environ, cwd };
  } catch {
    return undefined; // gone, a kernel thread, or not ours to inspect
  }
}

function commandLine(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

/** Live processes (not zombies, not this one) that match `query`, as `pid command` lines. */
export function leftoverProcesses(query: LeftoverQuery): string[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return []; // no /proc: the check cannot run on this platform
  }
  // Entries of /proc/<pid>/environ are NUL-terminated; matching the terminator too rules out a longer value.
  const marker = `${query.marker.name}=${query.marker.value}\0`;
  const dirs = query.dirs ?? [];
  const found: string[] = [];
  for (const pid of entries) {
    if (pid === String(process.pid)) continue;
    const facts = processFacts(pid);
    if (!facts || facts.state === "Z") continue;
    const inDir = dirs.some((dir) => facts.cwd === dir || facts.cwd.startsWith(`${dir}/`));
    if (facts.environ.includes(marker) || inDir) found.push(`${pid} ${commandLine(pid)}`);
  }
  return found;
}

/** Waits up to `ms` for the leftovers of `query` to go (killed processes take a moment to die); returns those left. */
export async function waitForNoLeftovers(query: LeftoverQuery, ms = 3000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = leftoverProcesses(query);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether this platform lets the scan see other processes' environments (so a positive control can be asserted). */
export function canScanProcesses(): boolean {
  try {
    readFileSync(`/proc/${process.pid}/environ`);
    return true;
  } catch {
    return false;
  }
}
