export {
  type AgentManifest,
  type AgentManifestEntry,
  hostPlatform,
  packagedAgent,
  readManifest,
} from "./agent-binary.js";
export {
  type AgentProcess,
  Connection,
  type ConnectionOptions,
  isConnectionLost,
  RemoteError,
  type RemoteInfo,
  type Reply,
  type RequestOptions,
} from "./connection.js";
export { rangeDecoder, StreamDecoder, startsWithBom } from "./decode.js";
export * from "./errors.js";
export { type CommandEnv, CommandRunner } from "./exec.js";
export type { ExecutionErrorClass, FileErrorClass, HostErrorClasses } from "./host-errors.js";
export { LIST_FILES_FEATURE, type ListFilesOptions, type ListFilesResult } from "./list-files.js";
export { LocalExecutionEnv, type LocalExecutionEnvOptions } from "./local-env.js";
export { RemoteExecutionEnv, type RemoteExecutionEnvOptions } from "./remote-env.js";
export * from "./result.js";
export {
  type AcceptedHostKey,
  acceptHostKey,
  connectSsh,
  deployAgent,
  detectPlatform,
  forgetHostKey,
  type ScannedHostKey,
  SshConnection,
  type SshConnectOptions,
  type SshEnvOptions,
  SshExecutionEnv,
  scanHostKey,
  sshConnection,
} from "./ssh/connect.js";
export type { DeployedAgent, DeployOptions } from "./ssh/deploy.js";
export { HostKeyChangedError, HostKeyUnknownError, SshError, type SshErrorCode } from "./ssh/errors.js";
export type { RemotePlatform } from "./ssh/platform.js";
export type { SshTargetOptions } from "./ssh/target.js";
export type * from "./types.js";
export { RemoteWatcher, type RemoteWatchOptions } from "./watch.js";
