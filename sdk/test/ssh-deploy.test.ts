/**
 * Deployment's decisions, against a scripted remote: how the remote's hash output is read (sha256sum, openssl,
 * login noise, a missing file, no hashing tool), where the agent goes, the upload's order (temporary name, verify,
 * rename, verify again, clean up) and each way it fails. ssh.e2e.test.ts deploys to a real sshd; this file covers the
 * outputs and failures a real remote does not produce on demand.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { deployOn, localAgent, remoteAgentPath, remoteHash } from "../src/ssh/deploy.js";
import type { RemotePlatform } from "../src/ssh/platform.js";
import type { RemoteAccess } from "../src/ssh/remote-access.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-deploy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const agentBytes = Buffer.from("#!/bin/sh\necho a stand-in agent\n");
const agentFile = join(dir, "agent");
writeFileSync(agentFile, agentBytes);
const agentSha = createHash("sha256").update(agentBytes).digest("hex");
const linux: RemotePlatform = { platform: "linux", arch: "x64", home: "/home/u", shell: "posix" };
const finalPath = `/home/u/.outpost/bin/outpost-${agentSha}`;

/** Reads back the path a command quoted last (shellQuote's form). */
function lastQuoted(command: string): string {
  const match = /'((?:[^']|'\\'')*)'$/.exec(command);
  if (match === null) throw new Error(`no quoted argument in ${command}`);
  return match[1].replace(/'\\''/g, "'");
}

/**
 * A remote whose files are hashes by path; `run` answers the hash script as sha256sum would (after login noise) and
 * records the cleanup; `put` stores what `upload` says the file becomes, `rename` moves it.
 */
function scriptedRemote(files: Map<string, string>, uploadedAs = agentSha) {
  const calls: string[] = [];
  const remote: RemoteAccess = {
    run: async (command) => {
      if (command.includes(" outpost-clean ")) {
        calls.push("clean");
        return { stdout: "", stderr: "", code: 0 };
      }
      const path = lastQuoted(command);
      calls.push(`hash ${path}`);
      const hash = files.get(path);
      const answer = hash === undefined ? "missing" : `${hash}  -`;
      return { stdout: `Welcome!\nOUTPOST-HASH\n${answer}\n`, stderr: "", code: 0 };
    },
    put: async (local, size, directory, temp) => {
      calls.push(`put ${temp}`);
      expect([local, size, directory]).toEqual([agentFile, agentBytes.length, "/home/u/.outpost/bin"]);
      files.set(temp, uploadedAs);
    },
    rename: async (from, to) => {
      calls.push(`rename ${from} ${to}`);
      const hash = files.get(from);
      files.delete(from);
      if (hash !== undefined) files.set(to, hash);
    },
    remove: async (path) => {
      calls.push(`remove ${path}`);
      files.delete(path);
    },
  };
  return { remote, calls };
}

/** A remote whose `run` prints `stdout` for any command. */
function printing(stdout: string, stderr = ""): RemoteAccess & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    run: async (command) => {
      commands.push(command);
      return { stdout, stderr, code: 0 };
    },
    put: async () => {},
    rename: async () => {},
    remove: async () => {},
  };
}

describe("remoteHash", () => {
  const hex = "ab".repeat(32);

  it("reads sha256sum's and openssl's output after the marker, in lower case", async () => {
    expect(await remoteHash(printing(`OUTPOST-HASH\n${hex.toUpperCase()}  -\n`), "/f")).toBe(hex);
    expect(await remoteHash(printing(`motd\nOUTPOST-HASH\r\n\n \t\n  SHA2-256(stdin)= ${hex}\r\n`), "/f")).toBe(hex);
  });

  it("says missing for a file that is not there", async () => {
    expect(await remoteHash(printing("OUTPOST-HASH\n  missing\n"), "/f")).toBe("missing");
  });

  it("fails as deploy when the remote has no hashing tool, prints no marker, or no 64-digit hash", async () => {
    // The one failure a person can mend on the remote is named as such.
    await expect(remoteHash(printing("OUTPOST-HASH\nnohash\n"), "/f")).rejects.toThrow(/sha256sum, shasum or openssl/);
    for (const stdout of ["OUTPOST-HASH\nnohash\n", `${hex}  -\n`, "OUTPOST-HASH\n", `OUTPOST-HASH\n${hex}0  -\n`]) {
      await expect(remoteHash(printing(stdout), "/f")).rejects.toMatchObject({ name: "SshError", code: "deploy" });
    }
  });

  it("passes the path as one quoted argument", async () => {
    const remote = printing("OUTPOST-HASH\nmissing\n");
    await remoteHash(remote, "/home/it's mine/$x");
    expect(remote.commands[0]).toMatch(/ outpost-hash '\/home\/it'\\''s mine\/\$x'$/);
  });
});

describe("remoteAgentPath", () => {
  it("puts the agent under ~/.outpost/bin by its hash, whatever slashes end the home", () => {
    expect(remoteAgentPath(linux, agentSha)).toBe(finalPath);
    expect(remoteAgentPath({ ...linux, home: "/home/u//" }, agentSha)).toBe(finalPath);
    expect(remoteAgentPath({ ...linux, home: "/" }, "00")).toBe("/.outpost/bin/outpost-00");
  });
});

describe("localAgent", () => {
  const manifest = (sha256: string) => () => ({
    version: "0",
    agents: { "linux-x64": { path: "linux-x64/outpost", sha256, size: 1 } },
  });

  it("hashes the given binary and ignores the package manifest for it", async () => {
    const agent = await localAgent(linux, { agentBinary: agentFile }, manifest("00".repeat(32)));
    expect(agent).toEqual({ path: agentFile, sha256: agentSha, size: agentBytes.length });
  });

  it("refuses a packaged agent whose bytes do not match the manifest", async () => {
    await expect(localAgent(linux, {}, manifest("00".repeat(32)))).rejects.toMatchObject({ code: "deploy" });
    const agent = await localAgent(linux, {}, () => undefined);
    await expect(localAgent(linux, {}, manifest(agent.sha256))).resolves.toEqual(agent);
  });

  it("fails as deploy for a platform without a packaged agent, or an unreadable binary", async () => {
    await expect(localAgent({ ...linux, arch: "arm64", platform: "android" })).rejects.toMatchObject({
      code: "deploy",
    });
    await expect(localAgent(linux, { agentBinary: join(dir, "absent") })).rejects.toMatchObject({ code: "deploy" });
  });
});

describe("deployOn", () => {
  const options = { agentBinary: agentFile };

  it("uses a present agent that verifies, without uploading", async () => {
    const { remote, calls } = scriptedRemote(new Map([[finalPath, agentSha]]));
    expect(await deployOn(remote, linux, options)).toEqual({ path: finalPath, sha256: agentSha, uploaded: false });
    expect(calls).toEqual([`hash ${finalPath}`]);
  });

  it("uploads under a temporary name, verifies it, renames it into place, verifies again, then cleans up", async () => {
    const { remote, calls } = scriptedRemote(new Map([[finalPath, "ff".repeat(32)]]));
    expect(await deployOn(remote, linux, options)).toEqual({ path: finalPath, sha256: agentSha, uploaded: true });
    const temp = calls[1].slice("put ".length);
    expect(temp).toMatch(new RegExp(`^/home/u/\\.outpost/bin/\\.outpost-${agentSha}\\.[0-9a-f]{12}\\.tmp$`));
    expect(calls).toEqual([
      `hash ${finalPath}`,
      `put ${temp}`,
      `hash ${temp}`,
      `rename ${temp} ${finalPath}`,
      `hash ${finalPath}`,
      "clean",
    ]);
  });

  it("removes a corrupt upload and fails without renaming it", async () => {
    const { remote, calls } = scriptedRemote(new Map(), "ee".repeat(32));
    await expect(deployOn(remote, linux, options)).rejects.toMatchObject({ code: "deploy" });
    const temp = calls[1].slice("put ".length);
    expect(calls).toEqual([`hash ${finalPath}`, `put ${temp}`, `hash ${temp}`, `remove ${temp}`]);
  });

  it("fails when the renamed agent does not verify", async () => {
    const { remote } = scriptedRemote(new Map());
    remote.rename = async () => {};
    await expect(deployOn(remote, linux, options)).rejects.toMatchObject({ code: "deploy" });
  });

  it("succeeds though the cleanup fails", async () => {
    const { remote } = scriptedRemote(new Map());
    const run = remote.run.bind(remote);
    remote.run = async (command) => {
      if (command.includes(" outpost-clean ")) throw new Error("connection dropped");
      return run(command);
    };
    expect((await deployOn(remote, linux, options)).uploaded).toBe(true);
  });

  it("deploys to Windows only through cmd.exe with SFTP hashing", async () => {
    const windows: RemotePlatform = { platform: "windows", arch: "x64", home: "C:\\Users\\u", shell: "posix" };
    const { remote } = scriptedRemote(new Map());
    await expect(deployOn(remote, windows, options)).rejects.toMatchObject({ code: "platform" });
    await expect(deployOn(remote, { ...windows, shell: "cmd" }, options)).rejects.toMatchObject({ code: "platform" });
    // With SFTP hashing, a shell other than cmd is still refused, and cmd deploys, hashing by SFTP alone.
    const files = new Map<string, string>();
    const calls: string[] = [];
    const sftp: RemoteAccess = {
      run: async (command) => {
        calls.push(`run ${command}`);
        return { stdout: "", stderr: "", code: 0 };
      },
      put: async (_local, _size, directory, temp) => {
        calls.push(`put ${directory} ${temp}`);
        files.set(temp, agentSha);
      },
      rename: async (from, to) => {
        calls.push(`rename ${from} ${to}`);
        files.set(to, files.get(from) ?? "");
        files.delete(from);
      },
      remove: async () => {},
      sha256: async (path) => files.get(path) ?? "missing",
    };
    await expect(deployOn(sftp, { ...windows, shell: "powershell" }, options)).rejects.toMatchObject({
      code: "platform",
    });
    const exe = `C:\\Users\\u\\.outpost\\bin\\outpost-${agentSha}.exe`;
    expect(await deployOn(sftp, { ...windows, shell: "cmd" }, options)).toEqual({
      path: exe,
      sha256: agentSha,
      uploaded: true,
    });
    expect(calls.every((call) => !call.startsWith("run "))).toBe(true);
    expect(calls.at(-1)).toBe(`rename ${calls[0].split(" ")[2]} /${exe.replace(/\\/g, "/")}`);
    expect(calls[0].split(" ")[1]).toBe("/C:/Users/u/.outpost/bin");
  });
});
