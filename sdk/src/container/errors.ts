/** The failures of reaching a container and preparing the agent in it: one class with a stable code. */

/** What went wrong while reaching a container or preparing the agent in it. */
export type ContainerErrorCode =
  /** An option or target is malformed; nothing was attempted. */
  | "invalid"
  /** The engine's command (`podman`, `docker`, `kubectl`) is not on the PATH, or none of them for `auto`. */
  | "engine_missing"
  /** The engine knows no such container (or pod, or container in the pod). */
  | "container_not_found"
  /** The container exists but is not running (stopped, exited, paused). */
  | "container_not_running"
  /** The container's system could not be identified, or is not one Outpost has an agent for. */
  | "platform"
  /** The agent could not be copied into the container or did not verify there. */
  | "deploy"
  /** Another failure of an engine command. */
  | "engine";

/** A failure of the container bootstrap. `code` is stable; the message is for people. */
export class ContainerError extends Error {
  override readonly name = "ContainerError";
  readonly code: ContainerErrorCode;

  constructor(code: ContainerErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

/** Wraps anything thrown into a {@link ContainerError} of `code`, keeping a `ContainerError` as it is. */
export function asContainerError(thrown: unknown, code: ContainerErrorCode, context: string): ContainerError {
  if (thrown instanceof ContainerError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new ContainerError(code, `${context}: ${message}`, thrown);
}
