/**
 * The container entry points: `connectContainer` (an env, connected now) and `containerConnection` (a lazy
 * `Connection`). Every start of the agent verifies (or deploys) it in the container by its SHA-256 and only then
 * runs it with the engine's `exec -i`; a container that stopped or went away fails the start with
 * `container_not_running` / `container_not_found`.
 */
import { spawn } from "node:child_process";
import type { HostErrorClasses } from "../contract/host-errors.js";
import { err, ok, type Result } from "../contract/result.js";
import { agentFileName, agentFor } from "../env/agent-deploy.js";
import { RemoteExecutionEnv } from "../env/remote-env.js";
import { type AgentProcess, Connection } from "../wire/connection.js";
import { type ContainerPlatform, type DeployedAgent, deployInto, detectPlatform } from "./deploy.js";
import { type EngineKind, type EngineTarget, execArgv, resolveEngine } from "./engine.js";
import { asContainerError, ContainerError } from "./errors.js";
import { startIfVerified } from "./start.js";

/** Options of {@link containerConnection} and {@link connectContainer}. */
export interface ContainerConnectOptions {
  /** `auto` (default): the first of `podman`, `docker` on the PATH. `kubectl` only when asked for. */
  engine?: EngineKind | "auto";
  /** Global flags of the engine, before its subcommand (`--root …`, `--context …`, `-n namespace`). */
  engineArgs?: readonly string[];
  /** The container user every command runs as (`exec --user`; not with kubectl). */
  user?: string;
  /** The agent's working directory in the container (`exec --workdir`; not with kubectl). */
  workdir?: string;
  /**
   * Variables set in the agent's environment (its commands inherit them), and in the deployment's commands, so a
   * `HOME` given here also decides where the agent is deployed.
   */
  env?: Record<string, string>;
  /** The agent binary to deploy (default: the SDK's packaged agent for the container's platform). */
  agentBinary?: string;
  /** Receives the agent's stderr. */
  onLog?: (text: string) => void;
  /**
   * @internal `false` starts a deployed agent in two engine commands (verify, then start) instead of one
   * (`tools/bench-container.ts` compares the two).
   */
  verifiedStart?: boolean;
}

/** Options of {@link connectContainer}'s env. */
export interface ContainerEnvOptions extends ContainerConnectOptions {
  /** The env's working directory (default: the agent's, i.e. `workdir` or the container's). */
  cwd?: string;
  /** The env's file namespace id (default `outpost:<engine>:<target>`). */
  id?: string;
  /** A custom shell for string commands, as in `NodeExecutionEnv`. */
  shellPath?: string;
  /** Variables layered over the agent's environment for every command. */
  shellEnv?: Record<string, string | undefined>;
  /** The host's error classes every failure of the env is constructed with (see `RemoteExecutionEnvOptions`). */
  errors?: HostErrorClasses;
}

/**
 * How long closing lets the agent exit after its input ended, before the engine's client is signalled: a signal
 * kills only `podman exec` (or `docker exec`, `kubectl exec`), not the agent in the container, which would keep
 * running — and its exec session keep the container busy — until it noticed the lost input. The end of its input
 * stops it (and the commands it runs); the client exits when it has. Closing takes at most this plus 3 s (SIGTERM,
 * then SIGKILL to the client).
 */
export const CONTAINER_CLOSE_GRACE_MS = 2_000;

/** What a connection learns across starts. */
interface StartState {
  platform?: ContainerPlatform;
  deployed?: DeployedAgent;
  lastError?: ContainerError;
}

/**
 * `target` as the engine addresses it: a container name or id; for kubectl `pod` or `pod/container` (the
 * namespace goes in `engineArgs` as `-n`).
 */
export function engineTarget(kind: EngineKind, target: string, options: ContainerConnectOptions): EngineTarget {
  if (typeof target !== "string" || target === "" || target.startsWith("-")) {
    throw new ContainerError("invalid", `Invalid container: ${JSON.stringify(target)}`);
  }
  const base = { kind, program: kind, engineArgs: [...(options.engineArgs ?? [])], env: { ...options.env } };
  if (kind !== "kubectl") return { ...base, container: target, user: options.user, workdir: options.workdir };
  if (options.user !== undefined || options.workdir !== undefined) {
    throw new ContainerError("invalid", "kubectl exec has no --user or --workdir: leave user and workdir unset");
  }
  const parts = target.split("/");
  if (parts.length > 2 || parts.some((part) => part === "")) {
    throw new ContainerError("invalid", `Invalid kubectl target: ${JSON.stringify(target)} (pod or pod/container)`);
  }
  return { ...base, container: parts[0], podContainer: parts[1] };
}

function validate(options: ContainerConnectOptions): void {
  const { engine, engineArgs, env, user, workdir, agentBinary } = options;
  if (engine !== undefined && !["auto", "podman", "docker", "kubectl"].includes(engine)) {
    throw new ContainerError("invalid", `Invalid engine: ${JSON.stringify(engine)} (auto, podman, docker or kubectl)`);
  }
  if (engineArgs !== undefined && (!Array.isArray(engineArgs) || !engineArgs.every((a) => typeof a === "string"))) {
    throw new ContainerError("invalid", "Invalid engineArgs: expected an array of strings");
  }
  for (const [name, value] of Object.entries({ user, workdir, agentBinary })) {
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw new ContainerError("invalid", `Invalid ${name}: expected a non-empty string`);
    }
  }
  if (env !== undefined) {
    for (const [name, value] of Object.entries(env)) {
      if (name === "" || name.includes("=") || typeof value !== "string") {
        throw new ContainerError("invalid", `Invalid env entry ${JSON.stringify(name)}`);
      }
    }
  }
}

/** A `Connection` whose agent runs in a container; see {@link containerConnection}. */
export class ContainerConnection extends Connection {
  /** The engine and container the agent runs in. */
  readonly target: EngineTarget;
  readonly #state: StartState;

  /** Hosts call {@link containerConnection}, which validates the options and finds the engine first. */
  constructor(target: EngineTarget, options: ContainerConnectOptions) {
    const state: StartState = {};
    super({
      onLog: options.onLog,
      closeGraceMs: CONTAINER_CLOSE_GRACE_MS,
      launch: async (args) => {
        try {
          const agent = await launch(target, options, state, args);
          state.lastError = undefined;
          return agent;
        } catch (error) {
          state.lastError = asContainerError(error, "engine", `Cannot start the agent in ${target.container}`);
          throw state.lastError;
        }
      },
    });
    this.target = target;
    this.#state = state;
  }

  /** The container's system, once a start has detected it. */
  platform(): ContainerPlatform | undefined {
    return this.#state.platform;
  }

  /** The agent the latest start verified and ran. */
  deployed(): DeployedAgent | undefined {
    return this.#state.deployed;
  }

  /** Why the latest start failed, if it did (the typed error behind the request's `spawn_error`). */
  lastStartError(): ContainerError | undefined {
    return this.#state.lastError;
  }
}

/**
 * Verifies or deploys the agent, then runs it with `exec -i`. The platform learnt at the first start is kept; if
 * the agent is missing from where it was (a recreated container), the container is probed again. With a shell in
 * the container, a deployed agent is verified and started in one engine command ({@link startIfVerified}).
 */
async function launch(
  target: EngineTarget,
  options: ContainerConnectOptions,
  state: StartState,
  args: readonly string[],
): Promise<AgentProcess> {
  state.platform ??= await detectPlatform(target);
  if (state.platform.shell && options.verifiedStart !== false) {
    const agent = await agentFor(state.platform, options.agentBinary).catch((error: Error) => {
      throw new ContainerError("deploy", error.message, error);
    });
    const path = `${state.platform.dir}/${agentFileName(agent.sha256)}`;
    const started = await startIfVerified(target, path, agent.sha256, args);
    if (started !== undefined) {
      state.deployed = { path, sha256: agent.sha256, copied: false };
      return started;
    }
  }
  try {
    state.deployed = await deployInto(target, state.platform, options.agentBinary);
  } catch (error) {
    if (!(error instanceof ContainerError) || error.code !== "deploy") throw error;
    // A recreated container may differ (another user, a read-only home): probe it again, once.
    state.platform = await detectPlatform(target);
    state.deployed = await deployInto(target, state.platform, options.agentBinary);
  }
  const argv = execArgv(target, [state.deployed.path, ...args], { workdir: true });
  return spawn(argv[0], argv.slice(1), { stdio: "pipe", windowsHide: true });
}

/**
 * A lazy `Connection` to an agent in the container `target`: nothing runs until the first request. Every start
 * verifies or deploys the agent by SHA-256 and runs it; a failed start fails the waiting requests and the next
 * request tries again.
 */
export function containerConnection(
  target: string,
  options: ContainerConnectOptions = {},
): Result<ContainerConnection, ContainerError> {
  try {
    validate(options);
    const kind = resolveEngine(options.engine ?? "auto");
    return ok(new ContainerConnection(engineTarget(kind, target, options), options));
  } catch (error) {
    return err(asContainerError(error, "invalid", "Invalid container options"));
  }
}

/** An env in a container; `close()` stops its agent. */
export class ContainerExecutionEnv extends RemoteExecutionEnv {
  /** The connection to the agent. */
  readonly connection: ContainerConnection;
  /** The container's system. */
  readonly platform: ContainerPlatform;

  /** Hosts call {@link connectContainer}, which starts the agent first. */
  constructor(connection: ContainerConnection, platform: ContainerPlatform, cwd: string, options: ContainerEnvOptions) {
    const { kind, container, podContainer } = connection.target;
    const name = podContainer === undefined ? container : `${container}/${podContainer}`;
    super({
      connection,
      id: options.id ?? `outpost:${kind}:${name}`,
      cwd,
      shellPath: options.shellPath,
      shellEnv: options.shellEnv,
      errors: options.errors,
    });
    this.connection = connection;
    this.platform = platform;
  }

  /**
   * Stops the agent (killing any command it runs): its input ends and the engine's client exits once the agent
   * has; after {@link CONTAINER_CLOSE_GRACE_MS} the client is killed (SIGTERM, SIGKILL 3 s later), so closing never
   * takes longer than that, whatever state the container is in. The container keeps running.
   */
  async close(): Promise<void> {
    await this.connection.close();
  }
}

/**
 * Connects now: engine found, platform detected, agent verified or deployed, agent started. After a lost
 * connection (the container stopped) the env starts the agent again on its next call, which fails with
 * `container_not_running` (as a `spawn_error`) while the container is down.
 */
export async function connectContainer(
  target: string,
  options: ContainerEnvOptions = {},
): Promise<Result<ContainerExecutionEnv, ContainerError>> {
  const made = containerConnection(target, options);
  if (!made.ok) return made;
  const connection = made.value;
  try {
    const info = await connection.info();
    const platform = connection.platform()!;
    return ok(new ContainerExecutionEnv(connection, platform, options.cwd ?? info.cwd, options));
  } catch (error) {
    await connection.close();
    return err(
      connection.lastStartError() ?? asContainerError(error, "engine", `Cannot start the Outpost agent in ${target}`),
    );
  }
}
