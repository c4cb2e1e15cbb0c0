// RemoteError and isConnectionLost (sdk/src/wire/remote-error.ts), which hosts use on anything a request rejected with.
import { describe, expect, it } from "vitest";
import { closedError, isConnectionLost, lostError, RemoteError } from "../src/wire/remote-error.js";

describe("isConnectionLost", () => {
  it("is true only for an error whose fields say lost: true", () => {
    expect(isConnectionLost(lostError("gone"))).toBe(true);
    expect(isConnectionLost({ fields: { lost: true } })).toBe(true);
    expect(isConnectionLost(closedError())).toBe(false);
    expect(isConnectionLost(new RemoteError({ code: "ENOENT", lost: "true" }))).toBe(false);
    for (const value of [undefined, null, "lost", 1, true, {}, { fields: null }, { fields: "lost" }, { fields: 1 }]) {
      expect(isConnectionLost(value), JSON.stringify(value)).toBe(false);
    }
  });
});

describe("RemoteError", () => {
  it("takes code, path and message from the frame, with defaults for missing or mistyped ones", () => {
    const error = new RemoteError({ code: "EACCES", path: "/p", message: "denied", extra: 1 });
    expect([error.name, error.code, error.path, error.message]).toEqual(["RemoteError", "EACCES", "/p", "denied"]);
    expect(error.fields).toEqual({ code: "EACCES", path: "/p", message: "denied", extra: 1 });
    const bare = new RemoteError({ code: 1, path: 2 });
    expect([bare.code, bare.path, bare.message]).toEqual(["unknown", undefined, "Remote operation failed"]);
    expect(new RemoteError({ message: "frame" }, "override").message).toBe("override");
    expect(lostError("gone", "spawn_error").code).toBe("spawn_error");
  });
});
