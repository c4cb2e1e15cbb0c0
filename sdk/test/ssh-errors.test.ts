/**
 * The SSH bootstrap's error classes: stable names and codes a host can switch on, the facts a person needs in the
 * message (the host and the fingerprints to compare out of band), the cause kept, and asSshError's one wrapping.
 */
import { describe, expect, it } from "vitest";
import { asSshError, HostKeyChangedError, HostKeyUnknownError, SshError } from "../src/ssh/errors.js";

describe("SshError", () => {
  it("has a stable name and code, and keeps its cause only when there is one", () => {
    const cause = new Error("ECONNREFUSED");
    const error = new SshError("connect", "cannot reach h", cause);
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.code, error.message]).toEqual(["SshError", "connect", "cannot reach h"]);
    expect(error.cause).toBe(cause);
    const bare = new SshError("invalid", "bad port");
    expect("cause" in bare).toBe(false);
    // A falsy cause is still a cause.
    expect(new SshError("remote", "x", 0).cause).toBe(0);
  });

  it("HostKeyUnknownError names the host, key type and fingerprint", () => {
    const error = new HostKeyUnknownError("[h]:2222", "ssh-ed25519", "SHA256:abc");
    expect(error).toBeInstanceOf(SshError);
    expect([error.name, error.code]).toEqual(["HostKeyUnknownError", "host_key_unknown"]);
    expect([error.host, error.keyType, error.fingerprint]).toEqual(["[h]:2222", "ssh-ed25519", "SHA256:abc"]);
    for (const fact of ["[h]:2222", "ssh-ed25519", "SHA256:abc"]) expect(error.message).toContain(fact);
  });

  it("HostKeyChangedError names the host, every trusted fingerprint and the presented one", () => {
    const error = new HostKeyChangedError("h", "ssh-rsa", ["SHA256:old1", "SHA256:old2"], "SHA256:new");
    expect(error).toBeInstanceOf(SshError);
    expect([error.name, error.code]).toEqual(["HostKeyChangedError", "host_key_changed"]);
    expect([error.host, error.keyType, error.knownFingerprints, error.fingerprint]).toEqual([
      "h",
      "ssh-rsa",
      ["SHA256:old1", "SHA256:old2"],
      "SHA256:new",
    ]);
    for (const fact of ["h", "ssh-rsa", "SHA256:old1, SHA256:old2", "SHA256:new", "forgetHostKey"]) {
      expect(error.message).toContain(fact);
    }
  });
});

describe("asSshError", () => {
  it("keeps an SshError as it is, whatever code is asked for", () => {
    const original = new HostKeyUnknownError("h", "ssh-ed25519", "SHA256:abc");
    expect(asSshError(original, "deploy", "uploading")).toBe(original);
  });

  it("wraps an Error with the code, the context in front of its message, and the error as cause", () => {
    const thrown = new Error("permission denied");
    const error = asSshError(thrown, "deploy", "uploading the agent");
    expect(error).toBeInstanceOf(SshError);
    expect([error.code, error.message]).toEqual(["deploy", "uploading the agent: permission denied"]);
    expect(error.cause).toBe(thrown);
  });

  it("wraps a thrown non-Error by its string form", () => {
    const error = asSshError("socket hang up", "remote", "probing");
    expect([error.code, error.message, error.cause]).toEqual(["remote", "probing: socket hang up", "socket hang up"]);
  });
});
