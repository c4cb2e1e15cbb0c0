/**
 * The envs the conformance suite runs against, and the orphan-process check.
 *
 * Every test file that imports this module gets one sandbox directory: each case's `cwd` is a fresh `mkdtemp`
 * directory inside it, and `TMPDIR` points into it (set before any agent starts), so temp directories, temp
 * files and spill files of every env land there too and go away with it. Every command a case starts carries
 * the marker variable `OUTPOST_CONFORMANCE_RUN` (through `shellEnv`) or runs inside the sandbox, which is how
 * `leftoverProcesses` recognises processes a case left running.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  acceptHostKey,
  Connection,
  type ContainerConnection,
  containerConnection,
  type ExecutionEnv,
  getOrThrow,
  LocalExecutionEnv,
  packagedAgent,
  RemoteExecutionEnv,
  type SshConnection,
  scanHostKey,
  sshConnection,
} from "@outpost/sdk";
import { type ConformanceCase, type EnvSettings, registerConformance } from "@outpost/spec/conformance";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { afterAll, describe, expect, it } from "vitest";
import { type Podman, startPodman } from "../../sdk/test/fixtures/podman.js";
import { isolateHome, type Sshd, startSshd } from "../../sdk/test/fixtures/sshd.js";
import {
  type LeftoverQuery,
  newProcessMarker,
  leftoverProcesses as scanLeftovers,
  waitForNoLeftovers as waitForNoScannedLeftovers,
} from "./processes.js";

/** One env under test. */
export interface Target {
  readonly name: string;
  /** Whether its envs have Outpost's `listFiles`. */
  readonly listFiles: boolean;
  /** The shell of the suite's helper scripts, if not `sh -c`. */
  readonly shell?: readonly [string, string];
  /** Calls `use` with a fresh env whose cwd is a new empty directory, removed afterwards. */
  withEnv(use: (env: ExecutionEnv) => Promise<void>, settings?: EnvSettings): Promise<void>;
  /** Stops the agent this target shares between cases, if any. */
  close(): Promise<void>;
}

const marker = newProcessMarker("OUTPOST_CONFORMANCE_RUN");
/** The variable that marks every command of this file's run. */
export const markerName = marker.name;
/** Its value: unique per test file. */
export const markerValue = marker.value;

const sandbox = realpathSync(mkdtempSync(join(tmpdir(), "outpost-conformance-")));
const sandboxTmp = join(sandbox, "tmp");
mkdirSync(sandboxTmp);
process.env.TMPDIR = sandboxTmp;

/** The sandbox of this test file (case directories and `TMPDIR` are inside it). */
export const sandboxDir = sandbox;

/** A leftover of this file: a live process with the marker, or one whose cwd is inside the sandbox. */
const leftoverQuery: LeftoverQuery = { marker, dirs: [sandbox] };

const noContext = { abortSignal: undefined };

/** The options every target's env gets for a case: its directory, the case's shell and watch options, the marker. */
function caseOptions(cwd: string, settings: EnvSettings | undefined) {
  return {
    cwd,
    shellPath: settings?.shellPath,
    shellEnv: { ...settings?.shellEnv, [markerName]: markerValue },
    watch: settings?.watch,
  };
}

/** Runs `use` with an env made for a fresh case directory, then cleans up the env and the directory. */
async function inCaseDir<T extends ExecutionEnv>(
  make: (cwd: string) => T,
  use: (env: ExecutionEnv) => Promise<void>,
  dispose: (env: T) => Promise<void>,
): Promise<void> {
  const cwd = await mkdtemp(join(sandbox, "case-"));
  const env = make(cwd);
  try {
    await use(env);
  } finally {
    await env.cleanup(noContext);
    await dispose(env);
    await rm(cwd, { recursive: true, force: true });
  }
}

function referenceTarget(): Target {
  return {
    name: "reference NodeExecutionEnv",
    listFiles: false,
    withEnv: (use, settings) =>
      inCaseDir(
        (cwd) => new NodeExecutionEnv(caseOptions(cwd, settings)),
        use,
        async () => {},
      ),
    close: async () => {},
  };
}

function localTarget(): Target {
  return {
    name: "LocalExecutionEnv",
    listFiles: true,
    withEnv: (use, settings) =>
      inCaseDir(
        (cwd) => new LocalExecutionEnv(caseOptions(cwd, settings)),
        use,
        (env) => env.close(),
      ),
    close: async () => {},
  };
}

function remoteTarget(): Target {
  let connection: Connection | undefined;
  return {
    name: "RemoteExecutionEnv over a pipe",
    listFiles: true,
    withEnv: (use, settings) =>
      inCaseDir(
        (cwd) => {
          connection ??= new Connection({ command: [packagedAgent()] });
          return new RemoteExecutionEnv({ connection, id: "outpost:test", ...caseOptions(cwd, settings) });
        },
        use,
        async () => {},
      ),
    close: async () => {
      await connection?.close();
      connection = undefined;
    },
  };
}

/**
 * An agent over SSH: a throwaway sshd on 127.0.0.1 (started at the first case), its host key accepted into a
 * known-hosts file of its own, the agent deployed by `connectSsh`. Sessions get this file's `TMPDIR`.
 */
function sshTarget(): Target {
  let server: Promise<{ sshd: Sshd; connection: SshConnection; home: string }> | undefined;
  const start = async () => {
    const home = await isolateHome();
    const sshd = await startSshd({ env: { TMPDIR: sandboxTmp } });
    const scanned = getOrThrow(await scanHostKey(sshd.target, sshd.options));
    getOrThrow(await acceptHostKey(sshd.target, scanned.fingerprint, sshd.options));
    return { sshd, home, connection: getOrThrow(sshConnection(sshd.target, sshd.options)) };
  };
  return {
    name: "RemoteExecutionEnv over SSH",
    listFiles: true,
    withEnv: async (use, settings) => {
      server ??= start();
      const { connection } = await server;
      await inCaseDir(
        (cwd) => new RemoteExecutionEnv({ connection, id: "outpost:ssh-test", ...caseOptions(cwd, settings) }),
        use,
        async () => {},
      );
    },
    close: async () => {
      if (server === undefined) return;
      const { sshd, connection, home } = await server;
      server = undefined;
      await connection.close();
      await sshd.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * An agent in a Podman container (started at the first case): the busybox root filesystem plus the host's bash (the
 * shell string commands run with on Linux) and GNU stat and touch for the suite's helper scripts, the sandbox mounted at its own path so case directories are the same
 * paths inside, the agent deployed by the first start and given this file's `TMPDIR`.
 */
function containerTarget(): Target {
  let started: Promise<{ podman: Podman; connection: ContainerConnection }> | undefined;
  const start = async () => {
    const podman = await startPodman();
    // The suite's helper scripts use GNU stat and touch (fractional times), which busybox's lack.
    const hostCommands = ["stat", "touch"];
    const name = await podman.start({ rootfs: "busybox", bash: true, hostCommands, mounts: [sandbox] });
    const made = containerConnection(name, { engine: "podman", env: { TMPDIR: sandboxTmp } });
    return { podman, connection: getOrThrow(made) };
  };
  return {
    name: "RemoteExecutionEnv in a container",
    listFiles: true,
    // Busybox's sh runs its own applets before the PATH's, so the helper scripts' GNU tools need bash.
    shell: ["bash", "-c"],
    withEnv: async (use, settings) => {
      started ??= start();
      const { connection } = await started;
      await inCaseDir(
        (cwd) => new RemoteExecutionEnv({ connection, id: "outpost:container-test", ...caseOptions(cwd, settings) }),
        use,
        async () => {},
      );
    },
    close: async () => {
      if (started === undefined) return;
      const { podman, connection } = await started;
      started = undefined;
      try {
        await connection.close();
      } finally {
        await podman.dispose();
      }
    },
  };
}

/** Whether file permissions apply to this process's user (every target runs as it): not root. */
const permissionsApply = process.getuid !== undefined && process.getuid() !== 0;

/**
 * `make test-unprivileged` sets OUTPOST_PERMISSION_PASS=1 to register only the cases marked `permissions`: it runs
 * them as an unprivileged user and fails if any is skipped.
 */
const permissionPass = process.env.OUTPOST_PERMISSION_PASS === "1";

/** The targets: the reference, the local agent, an agent over a pipe, one over SSH and one in a container. */
export const targets: Target[] = [referenceTarget(), localTarget(), remoteTarget(), sshTarget(), containerTarget()];

/** A target by name prefix. */
export function target(name: string): Target {
  const found = targets.find((candidate) => candidate.name.startsWith(name));
  if (!found) throw new Error(`no conformance target ${name}`);
  return found;
}

/** Processes (not zombies) that carry this run's marker or run inside the sandbox: `pid command` lines. */
export function leftoverProcesses(): string[] {
  return scanLeftovers(leftoverQuery);
}

/** Waits up to `ms` for leftover processes to go (killed processes take a moment to die). */
export function waitForNoLeftovers(ms = 3000): Promise<string[]> {
  return waitForNoScannedLeftovers(leftoverQuery, ms);
}

/** Removes the sandbox. */
export function removeSandbox(): void {
  rmSync(sandbox, { recursive: true, force: true });
}

/**
 * Registers the whole conformance suite against the target named `name`, then a check that no command of any
 * case is still running; afterwards stops the target's agent and removes the sandbox. One call per test file.
 */
export function registerConformanceFor(name: string): void {
  const subject = target(name);
  // The permission pass declares permissions whatever the user: a case run as root then fails instead of skipping.
  const permissions = permissionPass || permissionsApply;
  const options = { withEnv: subject.withEnv, listFiles: subject.listFiles, permissions, shell: subject.shell };
  // It runs every permission case that applies to the target (the reference has no listFiles).
  const select = permissionPass ? (c: ConformanceCase) => c.permissions === true && c.skip === undefined : undefined;
  registerConformance({ describe, it }, subject.name, options, select);

  describe(`${subject.name}: processes`, () => {
    it("leaves no process of any case running", async () => {
      expect(await waitForNoLeftovers()).toEqual([]);
    });
  });

  afterAll(async () => {
    await subject.close();
    removeSandbox();
    // The container target's close() removes its container: bounded, but beyond the default 30 s on a busy machine
    // when podman rm has to be stopped (sdk/test/fixtures/podman.ts).
  }, 120_000);
}
