/**
 * `@outpost/sdk`: what a host uses — the envs (`LocalExecutionEnv`, `RemoteExecutionEnv`, the SSH env and its
 * helpers), their option types, `Result` and its helpers, the error classes and the `ExecutionEnv` types. The
 * protocol-level pieces (raw request types, the exec and watch clients, stream decoding) are in
 * `@outpost/sdk/protocol` (`protocol.ts`).
 */
// First: an older Node than Outpost supports stops here, with one message.
import "./node-version.js";

export {
  ContainerConnection,
  type ContainerConnectOptions,
  type ContainerEnvOptions,
  ContainerExecutionEnv,
  connectContainer,
  containerConnection,
} from "./container/connect.js";
export type { ContainerPlatform, DeployedAgent as ContainerDeployedAgent } from "./container/deploy.js";
export type { EngineKind } from "./container/engine.js";
export { ContainerError, type ContainerErrorCode } from "./container/errors.js";
export * from "./contract/errors.js";
export type { ExecutionErrorClass, FileErrorClass, HostErrorClasses } from "./contract/host-errors.js";
export * from "./contract/result.js";
export type * from "./contract/types.js";
export {
  type AgentManifest,
  type AgentManifestEntry,
  hostPlatform,
  packagedAgent,
  readManifest,
} from "./env/agent-binary.js";
export type { ListFilesOptions, ListFilesResult } from "./env/list-files.js";
export { LocalExecutionEnv, type LocalExecutionEnvOptions } from "./env/local-env.js";
export { RemoteExecutionEnv, type RemoteExecutionEnvOptions } from "./env/remote-env.js";
export type { SearchFilesOptions, SearchFilesResult, SearchMatch } from "./env/search-files.js";
export type { RemoteWatchOptions } from "./env/watch.js";
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
export { type AgentProcess, Connection, type ConnectionOptions, type RemoteInfo } from "./wire/connection.js";
