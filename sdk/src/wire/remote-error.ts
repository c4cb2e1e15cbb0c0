/** The failure every `Connection` request rejects with, and the ones the connection itself makes. */

/** A failure reported by the agent (an error frame), or a lost or closed connection. */
export class RemoteError extends Error {
  override readonly name = "RemoteError";
  /** The error frame's `code` if a string, else `"unknown"`. */
  code: string;
  /** The error frame's `path` if a string. */
  path?: string;
  /** The error frame's whole JSON. */
  fields: Record<string, unknown>;

  /** Builds the error from an error frame's JSON; `message` overrides the frame's message. */
  constructor(fields: Record<string, unknown>, message?: string) {
    super(message ?? (typeof fields.message === "string" ? fields.message : "Remote operation failed"));
    this.code = typeof fields.code === "string" ? fields.code : "unknown";
    if (typeof fields.path === "string") this.path = fields.path;
    this.fields = fields;
  }
}

/** Tells whether an error means the agent connection was lost (the outcome of the request is then unknown). */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("fields" in error)) return false;
  const fields = (error as { fields: unknown }).fields;
  return typeof fields === "object" && fields !== null && (fields as Record<string, unknown>).lost === true;
}

/** A lost connection: the outcome of the request is unknown. */
export function lostError(message: string, code = "unknown"): RemoteError {
  return new RemoteError({ code, message, lost: true });
}

/** The connection was closed by `close()`. */
export function closedError(): RemoteError {
  return new RemoteError({ code: "unknown", message: "Connection closed" });
}

/** The message of anything thrown. */
export function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}
