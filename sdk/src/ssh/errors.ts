/** The failures of Outpost's SSH bootstrap: one class with a stable code, two subclasses for host-key trust. */

/** What went wrong while reaching, trusting or preparing an SSH target. */
export type SshErrorCode =
  /** An option or target is malformed; nothing was attempted. */
  | "invalid"
  /** The ssh config file could not be read or parsed. */
  | "config"
  /** No TCP connection, no SSH handshake, or it did not finish within the connect timeout. */
  | "connect"
  /** The server accepted none of the offered authentication methods. */
  | "auth"
  /** The server's host key is not trusted yet ({@link HostKeyUnknownError}). */
  | "host_key_unknown"
  /** The server's host key differs from the trusted one ({@link HostKeyChangedError}). */
  | "host_key_changed"
  /** The server presented a key marked `@revoked` in a known-hosts file. */
  | "host_key_revoked"
  /** `acceptHostKey` was given a fingerprint that is not the server's. */
  | "fingerprint_mismatch"
  /** A known-hosts file could not be read, locked or written. */
  | "known_hosts"
  /** The remote system could not be identified, or is not one Outpost has an agent for. */
  | "platform"
  /** The agent could not be uploaded or verified on the remote. */
  | "deploy"
  /** A remote command failed or the SSH connection dropped during the bootstrap. */
  | "remote";

/** A failure of the SSH bootstrap. `code` is stable; the message is for people. */
export class SshError extends Error {
  override readonly name: string = "SshError";
  readonly code: SshErrorCode;

  constructor(code: SshErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}

/** The host's key is in no trusted known-hosts file: compare `fingerprint` out of band, then `acceptHostKey`. */
export class HostKeyUnknownError extends SshError {
  override readonly name = "HostKeyUnknownError";
  /** The name the key is looked up under: `host`, or `[host]:port` for a port other than 22. */
  readonly host: string;
  /** The key's type, e.g. `ssh-ed25519`. */
  readonly keyType: string;
  /** OpenSSH's `SHA256:<base64>` fingerprint of the key the server presented. */
  readonly fingerprint: string;

  constructor(host: string, keyType: string, fingerprint: string) {
    super("host_key_unknown", `The host key of ${host} is not trusted yet (${keyType} ${fingerprint})`);
    this.host = host;
    this.keyType = keyType;
    this.fingerprint = fingerprint;
  }
}

/** The host presented a key other than the trusted one for its type; Outpost never connects then. */
export class HostKeyChangedError extends SshError {
  override readonly name = "HostKeyChangedError";
  readonly host: string;
  readonly keyType: string;
  /** Fingerprints of the trusted keys of this type. */
  readonly knownFingerprints: string[];
  /** Fingerprint of the key the server presented. */
  readonly fingerprint: string;

  constructor(host: string, keyType: string, knownFingerprints: string[], fingerprint: string) {
    super(
      "host_key_changed",
      `The host key of ${host} changed: trusted ${keyType} ${knownFingerprints.join(", ")}, presented ${fingerprint}. ` +
        "Someone may be intercepting the connection; forgetHostKey only after checking the new key out of band",
    );
    this.host = host;
    this.keyType = keyType;
    this.knownFingerprints = knownFingerprints;
    this.fingerprint = fingerprint;
  }
}

/** Wraps anything thrown into an {@link SshError} of `code`, keeping an `SshError` as it is. */
export function asSshError(thrown: unknown, code: SshErrorCode, context: string): SshError {
  if (thrown instanceof SshError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new SshError(code, `${context}: ${message}`, thrown);
}
