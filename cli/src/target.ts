/**
 * `<target>`: `local` (a LocalExecutionEnv on this machine) or an SSH target as `connectSsh` takes it
 * (`user@host:port` or an ssh config alias), with the global SSH options.
 */
import {
  type Connection,
  connectSsh,
  hostPlatform,
  LocalExecutionEnv,
  packagedAgent,
  type RemoteExecutionEnv,
  type SshConnectOptions,
  type SshTargetOptions,
} from "@outpost/sdk";
import { sshFailed } from "./exit.js";

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
  close(): Promise<void>;
}

/** Whether `target` names this machine rather than an SSH server. */
export function isLocal(target: string): boolean {
  return target === "local";
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
