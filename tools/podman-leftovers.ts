/**
 * What the podman test fixture (sdk/test/fixtures/podman.ts) may leave behind under a directory of its own, and its
 * removal by force. A fixture's directory `dir` holds its configuration, storage, runc state and root filesystems,
 * so everything it started can be told by that path:
 * - processes: conmon and podman's cleanup commands (their argv names `dir`), podman and the CLI started by tests
 *   (their environment has `CONTAINERS_CONF=<dir>/…`), and every process inside a container (in the cgroup of a
 *   container of the storage under `dir`: `…/libpod-<id>`);
 * - mounts under `dir` (each container's `shm`);
 * - containers in runc's state under `dir` (`runc-state`), and the directory itself.
 *
 * Run as a program (`node --import tsx tools/podman-leftovers.ts <dir>`), it is the end of `make test-containers`:
 * it lists and removes whatever the fixtures under `<dir>` (`.cache/podman`) left, and fails if there was anything,
 * after printing the reports of fixtures whose `podman rm` had to be stopped (see `startPodman`).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** What is left of the fixtures under a directory. */
export interface PodmanLeftovers {
  /** Live processes (not zombies, not this one), as `pid command` lines. */
  processes: string[];
  /** Mount points under the directory. */
  mounts: string[];
  /** Containers runc still knows, as `state-dir: id` lines. */
  containers: string[];
}

/** Whether nothing is left. */
export function isClean(left: PodmanLeftovers): boolean {
  return left.processes.length + left.mounts.length + left.containers.length === 0;
}

/** The leftovers as lines, for messages. */
export function describeLeftovers(left: PodmanLeftovers): string {
  return [
    ...left.containers.map((line) => `container ${line}`),
    ...left.processes.map((line) => `process ${line}`),
    ...left.mounts.map((line) => `mount ${line}`),
  ].join("\n");
}

function read(path: string, encoding: BufferEncoding = "latin1"): string | undefined {
  try {
    return readFileSync(path, encoding);
  } catch {
    return undefined;
  }
}

/** The fixtures' directories under `dir`: `dir` itself if it is one, else its entries that are. */
function fixtureDirs(dir: string): string[] {
  if (existsSync(join(dir, "containers.conf"))) return [dir];
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => existsSync(join(path, "containers.conf")));
}

/** Ids of the containers the fixtures under `dir` have created (their storage and runc state name them). */
function containerIds(dir: string): Set<string> {
  const ids = new Set<string>();
  for (const fixture of fixtureDirs(dir)) {
    for (const place of ["storage/overlay-containers", "runc-state"]) {
      const path = join(fixture, place);
      for (const name of existsSync(path) ? readdirSync(path) : []) if (/^[0-9a-f]{64}$/.test(name)) ids.add(name);
    }
  }
  return ids;
}

function isLive(pid: string): boolean {
  const stat = read(`/proc/${pid}/stat`);
  return stat !== undefined && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

function otherPids(): string[] {
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
}

/** Pids of live processes inside the containers of the fixtures under `dir` (by their cgroup). */
export function containerProcesses(dir: string): number[] {
  const ids = containerIds(resolve(dir));
  if (ids.size === 0) return [];
  return otherPids()
    .filter((pid) => {
      const cgroup = read(`/proc/${pid}/cgroup`) ?? "";
      return [...cgroup.matchAll(/libpod-([0-9a-f]{64})/g)].some((match) => ids.has(match[1])) && isLive(pid);
    })
    .map(Number);
}

/** Pids of live processes that belong to the fixtures under `dir` (see the module's list). */
function processIds(dir: string): number[] {
  const inContainers = new Set(containerProcesses(dir));
  const found: number[] = [];
  for (const name of otherPids()) {
    const pid = Number(name);
    const cmdline = read(`/proc/${name}/cmdline`) ?? "";
    const environ = read(`/proc/${name}/environ`) ?? "";
    const ours = inContainers.has(pid) || cmdline.includes(`${dir}/`) || environ.includes(`=${dir}/`);
    if (ours && isLive(name)) found.push(pid);
  }
  return found;
}

/** The command line of a process, for messages. */
export function commandOf(pid: number): string {
  return `${pid} ${(read(`/proc/${pid}/cmdline`) ?? "").replaceAll("\0", " ").trim().slice(0, 300)}`;
}

/** Mount points under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return (read("/proc/self/mounts") ?? "")
    .split("\n")
    .map((line) => line.split(" ")[1]?.replace(/\\040/g, " "))
    .filter((point): point is string => point?.startsWith(`${dir}/`) === true)
    .sort((a, b) => b.length - a.length);
}

/** runc state directories of the fixtures under `dir`. */
function runcStates(dir: string): string[] {
  return fixtureDirs(dir)
    .map((fixture) => join(fixture, "runc-state"))
    .filter((path) => existsSync(path));
}

async function runcContainers(state: string): Promise<string[]> {
  try {
    const { stdout } = await execFileAsync("runc", ["--root", state, "list", "-q"], { timeout: 15_000 });
    return stdout.split("\n").filter((id) => id !== "");
  } catch {
    return [];
  }
}

/** What the fixtures under `dir` left. */
export async function podmanLeftovers(dir: string): Promise<PodmanLeftovers> {
  const root = resolve(dir);
  const containers: string[] = [];
  for (const state of runcStates(root)) {
    for (const id of await runcContainers(state)) containers.push(`${state}: ${id}`);
  }
  return { processes: processIds(root).map(commandOf), mounts: mountsUnder(root), containers };
}

async function waitGone(pids: readonly number[], ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && pids.some((pid) => isLive(String(pid)))) {
    await new Promise((done) => setTimeout(done, 50));
  }
}

/**
 * Removes by force whatever the fixtures under `dir` left, then `dir` itself: runc deletes its containers (killing
 * their processes and removing their cgroups), every remaining process of theirs is killed, their mounts are
 * unmounted and the directory removed. Every step is bounded; returns what it found before removing it.
 */
export async function removeLeftovers(dir: string, options: { keepDir?: boolean } = {}): Promise<PodmanLeftovers> {
  const root = resolve(dir);
  const found = await podmanLeftovers(root);
  for (const state of runcStates(root)) {
    for (const id of await runcContainers(state)) {
      await execFileAsync("runc", ["--root", state, "delete", "--force", id], { timeout: 15_000 }).catch(() => {});
    }
  }
  const pids = processIds(root);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await waitGone(pids, 5_000);
  for (const point of mountsUnder(root)) {
    await execFileAsync("umount", ["-l", point], { timeout: 15_000 }).catch(() => {});
  }
  if (options.keepDir === true) {
    for (const name of existsSync(root) ? readdirSync(root) : []) {
      await rm(join(root, name), { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }
  } else {
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
  return found;
}

/** Where a fixture writes the report of a `podman rm` it had to stop: beside the fixtures' directories. */
export function reportDir(podmanDir: string): string {
  return `${resolve(podmanDir)}-reports`;
}

/** The end-of-run check: prints the fixtures' reports, removes what is left and fails if anything was. */
async function main(dir: string): Promise<number> {
  const reports = reportDir(dir);
  for (const name of existsSync(reports) ? readdirSync(reports) : []) {
    console.log(`podman fixture report ${name}:\n${read(join(reports, name), "utf8")}`);
  }
  rmSync(reports, { recursive: true, force: true });
  const runs = existsSync(dir) ? readdirSync(dir) : [];
  const left = await removeLeftovers(dir, { keepDir: true });
  if (isClean(left) && runs.length === 0) {
    console.log(`podman fixtures: nothing left under ${dir}`);
    return 0;
  }
  console.error(`podman fixtures left (now removed):\n${describeLeftovers(left)}`);
  for (const run of runs) console.error(`directory ${join(dir, run)}`);
  return 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = process.argv[2];
  if (dir === undefined) {
    console.error("usage: node --import tsx tools/podman-leftovers.ts <dir>");
    process.exit(2);
  }
  process.exit(await main(dir));
}
