/**
 * The SSH entry points: `connectSsh` (an env, connected now), `sshConnection` (a lazy `Connection`), the host-key
 * helpers `scanHostKey` / `acceptHostKey` / `forgetHostKey`, and `detectPlatform` / `deployAgent` for ops tools.
 * Every start of the agent runs on the SSH connection this process shares for the target (one is opened, its host
 * key checked, when none is open), verifies (or deploys) the agent by its SHA-256 and only then runs it: on a POSIX
 * target in one remote command when the agent is there (boot.ts).
 */

import type { HostErrorClasses } from "../contract/host-errors.js";
import { err, ok, type Result } from "../contract/result.js";
import { RemoteExecutionEnv } from "../env/remote-env.js";
import { type AgentProcess, Connection } from "../wire/connection.js";
import { SshAgentProcess } from "./agent-process.js";
import { bootLine, readBoot, uploadBootLine } from "./boot.js";
import { type OpenRoute, openRoute } from "./client.js";
import {
  agentTable,
  type DeployedAgent,
  type DeployOptions,
  deployOn,
  installAgent,
  localAgent,
  parseHash,
  remoteAgentPath,
} from "./deploy.js";
import { asSshError, SshError } from "./errors.js";
import { addHostKey, checkHostKey, fingerprintOf, keyTypeOf, readTrust, removeHost } from "./known-hosts.js";
import { opensshAccess, opensshCommand, spawnOverOpenssh } from "./openssh.js";
import { detectPlatformOn, isWindowsPosix, posixPlatform, type RemotePlatform } from "./platform.js";
import { type RemoteAccess, ssh2Access } from "./remote-access.js";
import { shellQuote } from "./remote-command.js";
import { SCRIPT_COMMAND } from "./remote-script.js";
import { RoutePool } from "./route-pool.js";
import { SSH_SESSION_VARIABLES } from "./session-variables.js";
import {
  checkIdentityFiles,
  parseTarget,
  type Route,
  resolveRoute,
  type SshTargetOptions,
  validateTargetOptions,
} from "./target.js";
import { windowsAgentPaths, windowsLaunchCommand } from "./windows.js";

/** Options of {@link sshConnection} and {@link connectSsh}. */
export interface SshConnectOptions extends SshTargetOptions, DeployOptions {
  /**
   * `ssh2` (default): SSH spoken in process. `openssh`: the system `ssh` client runs every remote step and the
   * agent's session (for hardware keys, ControlMaster, ProxyCommand); it authenticates on its own (`BatchMode`, so
   * `passphrase` and `password` are not used) and checks host keys against the same files.
   */
  transport?: "ssh2" | "openssh";
  /** The OpenSSH client program for `transport: "openssh"` (default `ssh` on the PATH). */
  sshProgram?: string;
  /** Receives the agent's stderr and whatever the remote shell printed before the agent's sync line. */
  onLog?: (text: string) => void;
}

/** Options of {@link connectSsh}'s env. */
export interface SshEnvOptions extends SshConnectOptions {
  /** The env's working directory (default: the remote home). */
  cwd?: string;
  /** The env's file namespace id (default `outpost:ssh:<target>`). */
  id?: string;
  /** A custom shell for string commands, as in `NodeExecutionEnv`. */
  shellPath?: string;
  /** Variables layered over the agent's environment for every command. */
  shellEnv?: Record<string, string | undefined>;
  /** The host's error classes every failure of the env is constructed with (see `RemoteExecutionEnvOptions`). */
  errors?: HostErrorClasses;
}

export { SSH_SESSION_VARIABLES };

/** The command line that starts the verified agent through the account's shell (POSIX). */
export function launchCommand(agentPath: string, args: readonly string[]): string {
  const unset = SSH_SESSION_VARIABLES.map((name) => `-u ${name}`).join(" ");
  return `exec env ${unset} ${[agentPath, ...args].map(shellQuote).join(" ")}`;
}

async function withRoute<T>(target: string, options: SshTargetOptions, use: (route: OpenRoute) => Promise<T>) {
  try {
    const route = await openRoute(await resolveRoute(target, options), options, { kind: "verify" });
    try {
      return ok(await use(route));
    } finally {
      route.close();
    }
  } catch (error) {
    return err(asSshError(error, "remote", `SSH to ${target} failed`));
  }
}

/** What a connection learns across starts. */
interface StartState {
  platform?: RemotePlatform;
  lastError?: SshError;
  deployed?: DeployedAgent;
}

/** The SSH connections every env of this process shares (SSH7). */
const pool = new RoutePool();

/** Ids for callbacks, so two option sets share a connection only with the same passphrase and password callbacks. */
const callbackIds = new WeakMap<object, number>();
let lastCallbackId = 0;
function callbackId(callback: object | undefined): number | undefined {
  if (callback === undefined) return undefined;
  if (!callbackIds.has(callback)) callbackIds.set(callback, ++lastCallbackId);
  return callbackIds.get(callback);
}

/** What a pooled connection was opened with: connections are shared only between identical ones. */
export function poolKey(route: Route, options: SshTargetOptions): string {
  return JSON.stringify({
    hops: route.hops,
    trust: route.trustFiles,
    known: route.knownHostsFile,
    agent: options.agent ?? process.env.SSH_AUTH_SOCK ?? null,
    passphrase: callbackId(options.passphrase) ?? null,
    password: callbackId(options.password) ?? null,
  });
}

/** The connection pool's connection count for `target` and `options` (for tests and the bench). */
export async function sharedConnections(target: string, options: SshTargetOptions = {}): Promise<number> {
  return pool.connections(poolKey(await resolveRoute(target, options), options));
}

/**
 * Starts the agent on a POSIX target in as few remote commands as the rules allow (SSH7): one boot command probes,
 * verifies and execs it; when the agent is missing or does not verify, one more command uploads and starts it where
 * the remote's `head -c` reads exactly, else one upload command and a second boot. `script` starts a remote
 * `SCRIPT_COMMAND`. `undefined` when no POSIX shell answered (Windows): the caller takes the step-by-step path.
 */
async function bootPosix(
  script: () => Promise<AgentProcess>,
  remote: RemoteAccess,
  options: SshConnectOptions,
  state: StartState,
  args: readonly string[],
): Promise<AgentProcess | undefined> {
  const table = await agentTable(options);
  let uploaded = false;
  let next = async () => {
    const { line, marker } = bootLine(table, args);
    return readBoot(await script(), line, marker);
  };
  for (;;) {
    const outcome = await next();
    if (outcome.kind === "none") return undefined;
    if (outcome.probe === undefined || isWindowsPosix(outcome.probe)) {
      if (outcome.kind === "start") outcome.agent.kill();
      return undefined;
    }
    const platform = posixPlatform(outcome.probe);
    state.platform = platform;
    const agent = await localAgent(platform, options);
    if (outcome.kind === "start") {
      if (outcome.sha256 !== agent.sha256) {
        outcome.agent.kill();
        throw new SshError("deploy", `The remote started agent ${outcome.sha256}, not ${agent.sha256}`);
      }
      state.deployed = { path: remoteAgentPath(platform, agent.sha256), sha256: agent.sha256, uploaded };
      return outcome.agent;
    }
    if (uploaded) {
      const said = [outcome.hash, outcome.stderr.slice(-300)].filter((text) => text !== "").join(": ");
      throw new SshError("deploy", `The agent does not verify on the remote after its upload (${said})`);
    }
    parseHash(outcome.hash); // a remote without any hashing tool fails here, by name
    uploaded = true;
    if (outcome.exactRead) {
      const { line, marker } = uploadBootLine(agent, remoteAgentPath(platform, agent.sha256), args);
      const data = { path: agent.path, size: agent.size, onProgress: options.onProgress };
      next = async () => readBoot(await script(), line, marker, data);
    } else {
      state.deployed = await installAgent(remote, platform, options);
    }
  }
}

async function launchOverSsh2(
  target: string,
  options: SshConnectOptions,
  state: StartState,
  args: readonly string[],
): Promise<AgentProcess> {
  const route = await resolveRoute(target, options);
  const lease = await pool.lease(poolKey(route, options), () => openRoute(route, options, { kind: "verify" }));
  try {
    const remote = ssh2Access(lease.route.client);
    if (state.platform?.platform !== "windows") {
      const script = async () => {
        const channel = await lease.exec(SCRIPT_COMMAND);
        // Held once the channel is open: a failed exec holds nothing.
        return new SshAgentProcess(lease.hold(), channel);
      };
      const agent = await bootPosix(script, remote, options, state, args);
      if (agent !== undefined) return agent;
    }
    state.platform ??= await detectPlatformOn(remote);
    state.deployed = await deployOn(remote, state.platform, options);
    const command =
      state.platform.platform === "windows"
        ? windowsLaunchCommand(
            windowsAgentPaths(state.platform.home, state.deployed.sha256),
            args,
            SSH_SESSION_VARIABLES,
          )
        : launchCommand(state.deployed.path, args);
    return new SshAgentProcess(lease.hold(), await lease.exec(command));
  } finally {
    lease.release();
  }
}

/**
 * The host keys are checked the same way first (a scan over ssh2 through the same jump hosts, every hop judged
 * against the same trust files), so the failure is the same typed error; OpenSSH then checks every hop again itself
 * (`StrictHostKeyChecking=yes` on those files only, for the target and each jump host's `ssh -W`). A target ssh2
 * cannot reach to scan (e.g. behind a ProxyCommand) is left to OpenSSH's check alone.
 */
async function launchOverOpenssh(
  target: string,
  options: SshConnectOptions,
  state: StartState,
  args: readonly string[],
): Promise<AgentProcess> {
  const route = await resolveRoute(target, options);
  // The scan below sends no key; the files ssh will offer are checked here, before any connection.
  await checkIdentityFiles(options);
  const last = route.hops[route.hops.length - 1];
  const key = await scanRoute(route, options).catch((error: unknown) => {
    if (error instanceof SshError && (error.code === "connect" || error.code === "auth")) return undefined;
    throw error;
  });
  if (key !== undefined) {
    const verdict = checkHostKey(await readTrust(route.trustFiles, last.knownHostsName), key);
    if (verdict !== undefined) throw verdict;
  }
  const ssh = opensshCommand(options.sshProgram ?? "ssh", target, options, route);
  const remote = opensshAccess(ssh, last.knownHostsName);
  const script = async () => spawnOverOpenssh(ssh, SCRIPT_COMMAND);
  const agent = await bootPosix(script, remote, options, state, args);
  if (agent !== undefined) return agent;
  state.platform ??= await detectPlatformOn(remote);
  state.deployed = await deployOn(remote, state.platform, options);
  return spawnOverOpenssh(ssh, launchCommand(state.deployed.path, args));
}

/** A `Connection` whose agent runs on an SSH target; see {@link sshConnection}. */
export class SshConnection extends Connection {
  readonly #state: StartState;

  /** Hosts call {@link sshConnection}, which validates the options first. */
  constructor(target: string, options: SshConnectOptions) {
    const state: StartState = {};
    super({
      onLog: options.onLog,
      launch: async (args) => {
        try {
          const agent = await (options.transport === "openssh"
            ? launchOverOpenssh(target, options, state, args)
            : launchOverSsh2(target, options, state, args));
          state.lastError = undefined;
          return agent;
        } catch (error) {
          state.lastError = asSshError(error, "remote", `SSH to ${target} failed`);
          throw state.lastError;
        }
      },
    });
    this.#state = state;
  }

  /** The remote system, once the first start has detected it. */
  platform(): RemotePlatform | undefined {
    return this.#state.platform;
  }

  /** The agent the latest start verified and ran. */
  deployed(): DeployedAgent | undefined {
    return this.#state.deployed;
  }

  /** Why the latest start failed, if it did (the typed error behind the request's `spawn_error`). */
  lastStartError(): SshError | undefined {
    return this.#state.lastError;
  }
}

/**
 * A lazy `Connection` to an agent on `target` (`user@host:port` or an ssh config alias): nothing touches the
 * network until the first request. Every start uses the process's shared connection to the target or opens one
 * (checking the host key strictly), verifies or deploys the
 * agent by SHA-256 and runs it; a failed start fails the waiting requests and the next request tries again.
 */
export function sshConnection(target: string, options: SshConnectOptions = {}): Result<SshConnection, SshError> {
  try {
    // The options and the target's syntax are checked now; the config file is read at each start.
    validateShapes(target, options);
    return ok(new SshConnection(target, options));
  } catch (error) {
    return err(asSshError(error, "invalid", "Invalid SSH options"));
  }
}

function validateShapes(target: string, options: SshConnectOptions): void {
  parseTarget(target);
  validateTargetOptions(options);
  if (options.agentBinary !== undefined && (typeof options.agentBinary !== "string" || options.agentBinary === "")) {
    throw new SshError("invalid", "Invalid agentBinary: expected a path");
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== "function") {
    throw new SshError("invalid", "Invalid onProgress: expected a function");
  }
  if (options.transport !== undefined && options.transport !== "ssh2" && options.transport !== "openssh") {
    throw new SshError("invalid", `Invalid transport: ${JSON.stringify(options.transport)} (ssh2 or openssh)`);
  }
  if (options.sshProgram !== undefined && (typeof options.sshProgram !== "string" || options.sshProgram === "")) {
    throw new SshError("invalid", "Invalid sshProgram: expected a program name or path");
  }
  if (options.onLog !== undefined && typeof options.onLog !== "function") {
    throw new SshError("invalid", "Invalid onLog: expected a function");
  }
}

/**
 * An env on an SSH target; `close()` stops its agent and ends the SSH connection once no other env of the process
 * uses it.
 */
export class SshExecutionEnv extends RemoteExecutionEnv {
  /** The connection to the agent. */
  readonly connection: SshConnection;
  /** The remote system. */
  readonly platform: RemotePlatform;

  /** Hosts call {@link connectSsh}, which connects and detects the platform first. */
  constructor(connection: SshConnection, platform: RemotePlatform, id: string, options: SshEnvOptions) {
    super({
      connection,
      id,
      cwd: options.cwd ?? platform.home,
      shellPath: options.shellPath,
      shellEnv: options.shellEnv,
      errors: options.errors,
    });
    this.connection = connection;
    this.platform = platform;
  }

  /** Stops the agent (killing any command it runs); the SSH connection ends with the last env that uses it. */
  async close(): Promise<void> {
    await this.connection.close();
  }
}

/**
 * Connects now: host key, platform, agent verified or deployed, agent started. Fails with
 * `HostKeyUnknownError`, `HostKeyChangedError` or another {@link SshError}; after a lost connection the env
 * reconnects on its next call, re-verifying the host key and the agent.
 */
export async function connectSsh(
  target: string,
  options: SshEnvOptions = {},
): Promise<Result<SshExecutionEnv, SshError>> {
  const made = sshConnection(target, options);
  if (!made.ok) return made;
  const connection = made.value;
  try {
    await connection.info();
  } catch (error) {
    await connection.close();
    return err(
      connection.lastStartError() ?? asSshError(error, "remote", `Cannot start the Outpost agent on ${target}`),
    );
  }
  const platform = connection.platform()!;
  return ok(new SshExecutionEnv(connection, platform, options.id ?? `outpost:ssh:${target}`, options));
}

/** A host key as the server presented it. */
export interface ScannedHostKey {
  /** The name it is stored under: `host`, or `[host]:port`. */
  host: string;
  keyType: string;
  /** OpenSSH's `SHA256:<base64>` fingerprint: compare it with the server's out of band. */
  fingerprint: string;
  /** The public key blob, base64. */
  key: string;
}

async function scanRoute(route: Route, options: SshTargetOptions): Promise<Buffer> {
  let captured: Buffer | undefined;
  try {
    const open = await openRoute(route, options, { kind: "capture", onKey: (key) => (captured = key) });
    open.close();
  } catch (error) {
    if (captured === undefined) throw error;
  }
  if (captured === undefined) throw new SshError("connect", "The server sent no host key");
  return captured;
}

/** Asks the server for its host key (through the route's jump hosts, whose keys must be trusted) without trusting it. */
export async function scanHostKey(
  target: string,
  options: SshTargetOptions = {},
): Promise<Result<ScannedHostKey, SshError>> {
  try {
    const route = await resolveRoute(target, options);
    const key = await scanRoute(route, options);
    const host = route.hops[route.hops.length - 1].knownHostsName;
    return ok({ host, keyType: keyTypeOf(key), fingerprint: fingerprintOf(key), key: key.toString("base64") });
  } catch (error) {
    return err(asSshError(error, "connect", `Cannot scan the host key of ${target}`));
  }
}

/** The outcome of {@link acceptHostKey}. */
export interface AcceptedHostKey {
  host: string;
  fingerprint: string;
  /** `false` when the key was trusted already. */
  added: boolean;
}

/**
 * Trusts the target's host key if, and only if, the key the server presents now has `fingerprint`; writes it to
 * Outpost's known-hosts file. A different trusted key for the same type is never replaced ({@link HostKeyChangedError}:
 * `forgetHostKey` first). Safe to run from several processes at once.
 */
export async function acceptHostKey(
  target: string,
  fingerprint: string,
  options: SshTargetOptions = {},
): Promise<Result<AcceptedHostKey, SshError>> {
  if (typeof fingerprint !== "string" || !/^SHA256:[A-Za-z0-9+/]{43}$/.test(fingerprint)) {
    return err(
      new SshError("invalid", `Invalid fingerprint: ${JSON.stringify(fingerprint)} (expected SHA256:<43 base64>)`),
    );
  }
  try {
    const route = await resolveRoute(target, options);
    const key = await scanRoute(route, options);
    const host = route.hops[route.hops.length - 1].knownHostsName;
    const presented = fingerprintOf(key);
    if (presented !== fingerprint) {
      return err(
        new SshError("fingerprint_mismatch", `${host} presents ${presented}, not ${fingerprint}; nothing was trusted`),
      );
    }
    const verdict = checkHostKey(await readTrust(route.trustFiles, host), key);
    if (verdict === undefined) return ok({ host, fingerprint, added: false });
    if (verdict.code !== "host_key_unknown") return err(verdict);
    await addHostKey(route.knownHostsFile, host, key);
    return ok({ host, fingerprint, added: true });
  } catch (error) {
    return err(asSshError(error, "connect", `Cannot accept the host key of ${target}`));
  }
}

/** Removes every key of the target from Outpost's known-hosts file (the other trusted files are never written). */
export async function forgetHostKey(target: string, options: SshTargetOptions = {}): Promise<Result<void, SshError>> {
  try {
    const route = await resolveRoute(target, options);
    await removeHost(route.knownHostsFile, route.hops[route.hops.length - 1].knownHostsName);
    return ok(undefined);
  } catch (error) {
    return err(asSshError(error, "known_hosts", `Cannot forget the host key of ${target}`));
  }
}

/** Identifies the target's system (see {@link RemotePlatform}). */
export function detectPlatform(
  target: string,
  options: SshTargetOptions = {},
): Promise<Result<RemotePlatform, SshError>> {
  return withRoute(target, options, (route) => detectPlatformOn(ssh2Access(route.client)));
}

/** Verifies, or uploads and verifies, the agent on the target; returns its remote path. */
export function deployAgent(
  target: string,
  options: SshTargetOptions & DeployOptions = {},
): Promise<Result<DeployedAgent, SshError>> {
  return withRoute(target, options, async (route) => {
    const remote = ssh2Access(route.client);
    return deployOn(remote, await detectPlatformOn(remote), options);
  });
}
