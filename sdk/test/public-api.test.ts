// The values each entry point exports, by name: the root (`@outpost/sdk`) has what a host uses, the subpath
// (`@outpost/sdk/protocol`) the protocol-level pieces, and no name is exported by both. A change to either list
// is a change of the public API and must be made here on purpose. (Type-only exports leave no runtime trace;
// the type-level test in test/types and the package test cover those.)
import { describe, expect, it } from "vitest";
import * as root from "../src/index.js";
import * as protocol from "../src/protocol.js";

describe("the public API", () => {
  it("the root exports the envs, their helpers, Result helpers and the error classes", () => {
    expect(Object.keys(root).sort()).toEqual([
      "Connection",
      "ContainerConnection",
      "ContainerError",
      "ContainerExecutionEnv",
      "ExecutionError",
      "FileError",
      "HostKeyChangedError",
      "HostKeyUnknownError",
      "LocalExecutionEnv",
      "RemoteExecutionEnv",
      "SshConnection",
      "SshError",
      "SshExecutionEnv",
      "acceptHostKey",
      "connectContainer",
      "connectSsh",
      "containerConnection",
      "deployAgent",
      "detectPlatform",
      "err",
      "forgetHostKey",
      "getOrThrow",
      "getOrUndefined",
      "hostPlatform",
      "ok",
      "packagedAgent",
      "readManifest",
      "scanHostKey",
      "sshConnection",
      "toError",
    ]);
  });

  it("@outpost/sdk/protocol exports the protocol-level pieces", () => {
    expect(Object.keys(protocol).sort()).toEqual([
      "CommandRunner",
      "LIST_FILES_FEATURE",
      "READ_FILE_FEATURE",
      "RemoteError",
      "RemoteWatcher",
      "StreamDecoder",
      "isConnectionLost",
      "rangeDecoder",
      "startsWithBom",
    ]);
  });

  it("no name is exported by both", () => {
    expect(Object.keys(protocol).filter((name) => name in root)).toEqual([]);
  });
});
