/**
 * The envs the property tests compare, and the sandbox they run in.
 *
 * Every property file gets one sandbox directory: roots of the runs are made inside it, and `TMPDIR` points into
 * it, so temp directories, temp files and spill files of every env land there and are removed with it. `TMPDIR`
 * is set before any agent starts, so the agents and the in-process reference agree on the temp directory.
 *
 * Every process a file starts carries the file's marker variable (`processMarker`): the agents in their own
 * environment (the pipe's argv sets it; the local agent inherits it from `process.env`, set with `TMPDIR`) and
 * every command through `shellEnv`. Commands that inherit nothing still run inside the sandbox. After a file's
 * tests, once every agent is closed, no live process may carry the marker or run inside the sandbox.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { afterAll, beforeAll, expect } from "vitest";
import { type Podman, startPodman } from "../sdk/test/fixtures/podman.js";
import { isolateHome, type Sshd, startSshd } from "../sdk/test/fixtures/sshd.js";
import { markedArgv, markerEnv, newProcessMarker, waitForNoLeftovers } from "../spec/test/processes.js";
import { Normalizer, type Spellings } from "./normalize.js";

/** The variable that marks every agent and command of this property file's run (unique per file). */
export const processMarker = newProcessMarker("OUTPOST_PROPERTIES_RUN");

/** The `shellEnv` of every env: the marker. */
const markedShellEnv = markerEnv(processMarker);

/** One env under test, reused across runs: each run gives it a fresh root as its `cwd`. */
export interface Target {
  readonly name: string;
  /** The env, with `cwd` set to `root`. */
  at(root: string): ExecutionEnv;
  /** Stops the agent, if any. */
  close(): Promise<void>;
  /** Starts what the target needs once the file's sandbox exists (e.g. its SSH server), before any `at`. */
  prepare?(sandbox: Sandbox): Promise<void>;
}

/** The per-file sandbox: where roots and temp files go. */
export interface Sandbox {
  readonly base: string;
  readonly tmp: string;
  /** A fresh, empty root directory for one env of one run. */
  root(label: string): string;
  /** The normalizer of an env whose `cwd` is `root` (`messages`: keep error messages, for reports). */
  normalizer(root: string, options?: { messages?: boolean }): Normalizer;
  /** Removes one root and its parent (ignoring errors: a sequence may have removed the root already). */
  drop(root: string): void;
  /** Live processes of this file left after the agents stopped (see `processMarker`), as `pid command` lines. */
  leftovers(): Promise<string[]>;
  /** Removes everything and restores `TMPDIR` and the marker variable. */
  dispose(): void;
}

/** Creates the sandbox and points `TMPDIR` into it. Call before any agent starts. */
export function createSandbox(): Sandbox {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "outpost-props-")));
  const tmp = join(base, "tmp");
  mkdirSync(tmp);
  const previousTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  // The local agent is spawned with this process's environment: this is how it carries the marker.
  process.env[processMarker.name] = processMarker.value;
  let counter = 0;
  return {
    base,
    tmp,
    root(label) {
      counter += 1;
      // Every root has the same base name, since `fileInfo("")` reports it as the entry's name.
      const root = join(base, `${label}-${counter}`, "root");
      mkdirSync(root, { recursive: true });
      return root;
    },
    normalizer(root, options) {
      const spellings: Spellings = { roots: spellingsOf(root), tmpdirs: spellingsOf(tmp) };
      return new Normalizer(spellings, options);
    },
    drop(root) {
      rmSync(dirname(root), { recursive: true, force: true });
    },
    leftovers() {
      return waitForNoLeftovers({ marker: processMarker, dirs: [base] });
    },
    dispose() {
      delete process.env[processMarker.name];
      if (previousTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmpdir;
      rmSync(base, { recursive: true, force: true });
    },
  };
}

function spellingsOf(path: string): string[] {
  try {
    return [...new Set([path, realpathSync.native(path)])];
  } catch {
    return [path];
  }
}

/** The in-process reference, a new one per root (it costs nothing). */
export function referenceTarget(): Target {
  return {
    name: "reference NodeExecutionEnv",
    at: (root) => new NodeExecutionEnv({ cwd: root, shellEnv: markedShellEnv }),
    close: async () => {},
  };
}

/** Something an env may offer to stop its agent. */
interface Closable {
  close?: () => Promise<void>;
  cleanup(context: { abortSignal: AbortSignal | undefined }): Promise<void>;
}

function reusedEnv(name: string, create: (root: string) => ExecutionEnv, stop: () => Promise<void>): Target {
  let env: ExecutionEnv | undefined;
  return {
    name,
    at(root) {
      env ??= create(root);
      env.cwd = root;
      return env;
    },
    async close() {
      if (env !== undefined) {
        await (env as Closable).cleanup({ abortSignal: undefined });
        await (env as Closable).close?.();
      }
      await stop();
    },
  };
}

/** `LocalExecutionEnv`: the agent built for this machine, started as its child. */
export function localTarget(): Target {
  return reusedEnv(
    "LocalExecutionEnv",
    (root) => new LocalExecutionEnv({ cwd: root, shellEnv: markedShellEnv }),
    async () => {},
  );
}

/** `RemoteExecutionEnv` over a plain command pipe (a shell that execs the agent), as an SSH command would be. */
export function remoteTarget(): Target {
  let connection: Connection | undefined;
  return reusedEnv(
    "RemoteExecutionEnv over a pipe",
    (root) => {
      connection = new Connection({
        command: markedArgv(processMarker, ["sh", "-c", 'exec "$0" "$@"', packagedAgent()]),
      });
      return new RemoteExecutionEnv({ connection, id: "outpost:properties", cwd: root, shellEnv: markedShellEnv });
    },
    async () => {
      await connection?.close();
    },
  );
}

/**
 * `RemoteExecutionEnv` over SSH: a throwaway sshd on 127.0.0.1 whose sessions carry the sandbox's `TMPDIR` and the
 * file's marker, its host key accepted into its own known-hosts file, the agent deployed by the first start.
 */
export function sshTarget(): Target {
  let sshd: Sshd | undefined;
  let connection: SshConnection | undefined;
  let home: string | undefined;
  return {
    ...reusedEnv(
      "RemoteExecutionEnv over SSH",
      (root) => {
        if (sshd === undefined) throw new Error("the SSH target was not prepared");
        connection = getOrThrow(sshConnection(sshd.target, sshd.options));
        return new RemoteExecutionEnv({
          connection,
          id: "outpost:properties-ssh",
          cwd: root,
          shellEnv: markedShellEnv,
        });
      },
      async () => {
        await connection?.close();
        await sshd?.stop();
        if (home !== undefined) rmSync(home, { recursive: true, force: true });
      },
    ),
    async prepare(sandbox) {
      home = await isolateHome();
      sshd = await startSshd({ env: { TMPDIR: sandbox.tmp, [processMarker.name]: processMarker.value } });
      const scanned = getOrThrow(await scanHostKey(sshd.target, sshd.options));
      getOrThrow(await acceptHostKey(sshd.target, scanned.fingerprint, sshd.options));
    },
  };
}

/** This process's locale variables: the reference's commands inherit them, so the container's agent gets them. */
function localeOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const names = Object.keys(env).filter((name) => name === "LANG" || name === "LANGUAGE" || name.startsWith("LC_"));
  return Object.fromEntries(names.flatMap((name) => (env[name] ? [[name, env[name] as string]] : [])));
}

/** The host commands the property operations run beyond coreutils, which the `dash` root filesystem has. */
const PROPERTY_COMMANDS = ["kill"];

/**
 * `RemoteExecutionEnv` in a Podman container: the `dash` root filesystem (this machine's sh and coreutils) plus its
 * bash and the commands above, the sandbox mounted at its own path, the agent deployed by the first start and
 * carrying the sandbox's `TMPDIR` and the file's marker.
 */
export function containerTarget(): Target {
  let podman: Podman | undefined;
  let name: string | undefined;
  let connection: ContainerConnection | undefined;
  let agentEnv: Record<string, string> = {};
  return {
    ...reusedEnv(
      "RemoteExecutionEnv in a container",
      (root) => {
        if (name === undefined) throw new Error("the container target was not prepared");
        connection = getOrThrow(containerConnection(name, { engine: "podman", env: agentEnv }));
        return new RemoteExecutionEnv({
          connection,
          id: "outpost:properties-container",
          cwd: root,
          shellEnv: markedShellEnv,
        });
      },
      async () => {
        try {
          await connection?.close();
        } finally {
          await podman?.dispose();
        }
      },
    ),
    async prepare(sandbox) {
      podman = await startPodman();
      // The reference runs on this machine, so the container gets its userland: its dash as sh, its bash and the
      // GNU tools the operations run (busybox's print other messages, and busybox sh runs its own applets).
      name = await podman.start({
        rootfs: "dash",
        bash: true,
        hostCommands: PROPERTY_COMMANDS,
        mounts: [sandbox.base],
      });
      agentEnv = { TMPDIR: sandbox.tmp, [processMarker.name]: processMarker.value, ...localeOf(process.env) };
    },
  };
}

/**
 * The Outpost envs compared with the reference: the local agent, the pipe and SSH; under `make test-containers`
 * (OUTPOST_CONTAINERS=1) the container instead, so each property runs once per target across the two runs.
 */
export function outpostTargets(): Target[] {
  if (process.env.OUTPOST_CONTAINERS === "1") return [containerTarget()];
  return [localTarget(), remoteTarget(), sshTarget()];
}

/** What a property file compares: the reference, the Outpost envs, and the file's sandbox. */
export interface PropertyFixture {
  readonly reference: Target;
  /** The Outpost envs compared with the reference. */
  readonly targets: readonly Target[];
  /** The file's sandbox; it exists while the file's tests run. */
  readonly sandbox: Sandbox;
}

/**
 * Sets up a property file (call once, at its top level): the sandbox is created before the file's tests, so
 * `TMPDIR` points into it before any agent starts; after them every target's agent is stopped, the check that
 * no agent or command of the file outlives that runs, and the sandbox is removed. `targets` are the Outpost envs
 * the file uses (by default both).
 */
export function propertyFixture(targets: readonly Target[] = outpostTargets()): PropertyFixture {
  const reference = referenceTarget();
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = createSandbox();
    for (const target of targets) await target.prepare?.(sandbox);
  });
  afterAll(async () => {
    try {
      for (const target of [reference, ...targets]) await target.close();
      if (sandbox !== undefined)
        expect(await sandbox.leftovers(), "processes outlived the agents' close()").toEqual([]);
    } finally {
      sandbox?.dispose();
    }
    // Closing a container target stops its agent and removes its container: bounded (sdk/test/fixtures/podman.ts),
    // but beyond vitest's default hook budget of 30 s when podman rm has to be stopped on a busy machine.
  }, 120_000);
  return {
    reference,
    targets,
    get sandbox() {
      if (sandbox === undefined) throw new Error("the sandbox exists only while the file's tests run");
      return sandbox;
    },
  };
}
