/**
 * `<target>`: `local` (a LocalExecutionEnv on this machine), a container (`podman://<container>`,
 * `docker://<container>`, `kubectl://[namespace/]pod[/container]`, as `connectContainer` takes them) or an SSH
 * target as `connectSsh` takes it (`user@host:port` or an ssh config alias), with the global SSH options.
 */
import {
  type Connection,
  connectContainer,
  connectSsh,
  type EngineKind,
  hostPlatform,
  LocalExecutionEnv,
  packagedAgent,
  type RemoteExecutionEnv,
  type SshConnectOptions,
  type SshTargetOptions,
} from "@outpost/sdk";
import { CliFailure, sshFailed, usage } from "./exit.js";

/** The global options that say how to reach an SSH target. */
export interface TargetFlags {
  identity?: string[];
  sshConfig?: string;
  knownHosts?: string;
  trustedKnownHosts?: string[];
  connectTimeout?: number;
  agentBinary?: string;
  cwd?: string;
}

/** An open target: its env, the connection under it, and what `doctor` reports about it. */
export interface Session {
  readonly target: string;
  readonly env: RemoteExecutionEnv;
  readonly connection: Connection;
  /** `os-arch` of the target, as the SDK names platforms. */
  readonly platform: string;
  /** Where the agent binary is on the target. */
  agentPath(): string;
  /** A container's agent as the start verified it, and whether it copied it there. */
  deployed?(): { path: string; sha256: string; copied: boolean } | undefined;
  close(): Promise<void>;
}

/** Whether `target` names this machine rather than an SSH server. */
export function isLocal(target: string): boolean {
  return target === "local";
}

/** A container target: the engine, the container as `connectContainer` takes it, the engine's global flags. */
export interface ContainerTarget {
  engine: EngineKind;
  container: string;
  engineArgs: string[];
}

const CONTAINER_SCHEME = /^(podman|docker|kubectl):\/\/(.*)$/;

/** Whether `target` names a container (`podman://`, `docker://`, `kubectl://`). */
export function isContainer(target: string): boolean {
  return CONTAINER_SCHEME.test(target);
}

/**
 * Parses a container target. kubectl: `pod`, `namespace/pod` or `namespace/pod/container` (two segments are a
 * namespace and a pod; the namespace becomes `-n`). Podman/Docker: a container name or id.
 */
export function parseContainerTarget(target: string): ContainerTarget | undefined {
  const match = CONTAINER_SCHEME.exec(target);
  if (match === null) return undefined;
  const engine = match[1] as EngineKind;
  const rest = match[2];
  const parts = rest.split("/");
  if (rest === "" || parts.some((part) => part === "")) throw usageOf(target);
  if (engine !== "kubectl") {
    if (parts.length !== 1) throw usageOf(target);
    return { engine, container: rest, engineArgs: [] };
  }
  if (parts.length === 1) return { engine, container: parts[0], engineArgs: [] };
  if (parts.length > 3) throw usageOf(target);
  const [namespace, pod, container] = parts;
  return { engine, container: container === undefined ? pod : `${pod}/${container}`, engineArgs: ["-n", namespace] };
}

function usageOf(target: string): CliFailure {
  return usage(
    `${target}: expected podman://<container>, docker://<container> or kubectl://[namespace/]pod[/container]`,
  );
}

/** The SDK's SSH options from the global flags. */
export function sshOptions(flags: TargetFlags): SshTargetOptions {
  const options: SshTargetOptions = {};
  if (flags.identity !== undefined && flags.identity.length > 0) options.identityFiles = flags.identity;
  if (flags.sshConfig !== undefined) options.configFile = flags.sshConfig === "none" ? false : flags.sshConfig;
  if (flags.knownHosts !== undefined) options.knownHostsFile = flags.knownHosts;
  if (flags.trustedKnownHosts !== undefined) options.trustedKnownHostsFiles = flags.trustedKnownHosts;
  if (flags.connectTimeout !== undefined) options.connectTimeout = flags.connectTimeout;
  return options;
}

/** Opens `target` now (for SSH: host key checked, agent verified or deployed, agent started). */
export async function openTarget(
  target: string,
  flags: TargetFlags,
  extra: Pick<SshConnectOptions, "onProgress"> = {},
): Promise<Session> {
  if (isLocal(target)) {
    const agent = flags.agentBinary ?? packagedAgent();
    const env = new LocalExecutionEnv({ cwd: flags.cwd, agentPath: agent });
    return {
      target,
      env,
      connection: env.connection,
      platform: `${hostPlatform()}-${process.arch}`,
      agentPath: () => agent,
      close: () => env.close(),
    };
  }
  const container = parseContainerTarget(target);
  if (container !== undefined) return openContainer(target, container, flags);
  const opened = await connectSsh(target, {
    ...sshOptions(flags),
    ...extra,
    agentBinary: flags.agentBinary,
    cwd: flags.cwd,
  });
  if (!opened.ok) throw sshFailed(target, target, opened.error);
  const env = opened.value;
  return {
    target,
    env,
    connection: env.connection,
    platform: `${env.platform.platform}-${env.platform.arch}`,
    agentPath: () => env.connection.deployed()?.path ?? "outpost",
    close: () => env.close(),
  };
}

/** Opens a container target now: agent verified or deployed in it, and started. */
async function openContainer(target: string, parsed: ContainerTarget, flags: TargetFlags): Promise<Session> {
  const opened = await connectContainer(parsed.container, {
    engine: parsed.engine,
    engineArgs: parsed.engineArgs,
    agentBinary: flags.agentBinary,
    cwd: flags.cwd,
  });
  if (!opened.ok) throw new CliFailure(`${target}: ${opened.error.message}`, opened.error.code);
  const env = opened.value;
  return {
    target,
    env,
    connection: env.connection,
    platform: `${env.platform.platform}-${env.platform.arch}`,
    agentPath: () => env.connection.deployed()?.path ?? "outpost",
    deployed: () => env.connection.deployed(),
    close: () => env.close(),
  };
}

/** Opens `target`, runs `use`, and closes the target whatever happens. */
export async function withTarget<T>(
  target: string,
  flags: TargetFlags,
  use: (session: Session) => Promise<T>,
): Promise<T> {
  const session = await openTarget(target, flags);
  try {
    return await use(session);
  } finally {
    await session.close();
  }
}
