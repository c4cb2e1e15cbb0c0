/**
 * Deployment's decisions: how the remote's hash output is read (sha256sum, openssl, login noise, a missing file, no
 * hashing tool; against canned outputs), where the agent goes, and the upload script run for real by a local shell
 * that prints startup noise first (fixtures/local-remote.ts): modes, the final name only after it verified, and each
 * way it fails (a `cat` or `mv` that misbehaves, a file in the way). ssh.e2e.test.ts and ssh-shells.e2e.test.ts
 * deploy to real servers.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { deployOn, localAgent, remoteAgentPath, remoteHash } from "../src/ssh/deploy.js";
import type { RemotePlatform } from "../src/ssh/platform.js";
import type { RemoteAccess } from "../src/ssh/remote-access.js";
import { SCRIPT_COMMAND } from "../src/ssh/remote-script.js";
import { localRemote } from "./fixtures/local-remote.js";
import { sshFailure } from "./fixtures/ssh-failure.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-deploy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const agentBytes = Buffer.from("#!/bin/sh\necho a stand-in agent\n");
const agentFile = join(dir, "agent");
writeFileSync(agentFile, agentBytes);
const agentSha = createHash("sha256").update(agentBytes).digest("hex");
const linux: RemotePlatform = { platform: "linux", arch: "x64", home: "/home/u", shell: "posix" };
const finalPath = `/home/u/.outpost/bin/outpost-${agentSha}`;

/** A remote whose `run` prints `stdout` for any command, and records the script lines it was given. */
function printing(stdout: string, stderr = ""): RemoteAccess & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    run: async (_command, input) => {
      let text = "";
      const stdin = new PassThrough();
      stdin.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      const ended = new Promise((resolve) => stdin.on("end", resolve));
      input?.(stdin);
      if (input !== undefined) await ended;
      lines.push(text);
      return { stdout, stderr, code: 0 };
    },
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

  it("passes the path as one quoted argument on the script's line", async () => {
    const remote = printing("OUTPOST-HASH\nmissing\n");
    await remoteHash(remote, "/home/it's mine/$x");
    expect(remote.lines[0]).toMatch(/^set -- '\/home\/it'\\''s mine\/\$x'; /);
    // Run for real, with startup noise before it: the quoting holds.
    const home = mkdtempSync(join(dir, "it's $HOME "));
    writeFileSync(join(home, "f"), agentBytes);
    expect(await remoteHash(localRemote(), join(home, "f"))).toBe(agentSha);
    expect(await remoteHash(localRemote(), join(home, "absent"))).toBe("missing");
    expect(await remoteHash(localRemote(), home)).toBe("missing");
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
    // `make dist` builds android only for arm64 (tools/dist.sh), so no checkout or package carries android-x64.
    await expect(localAgent({ ...linux, arch: "x64", platform: "android" })).rejects.toMatchObject({
      code: "deploy",
    });
    await expect(localAgent(linux, { agentBinary: join(dir, "absent") })).rejects.toMatchObject({ code: "deploy" });
  });
});

describe("deployOn", () => {
  const options = { agentBinary: agentFile };
  /** A fresh home on the local "remote", and where the agent goes in it. */
  function home(): { platform: RemotePlatform; bin: string; path: string } {
    const root = mkdtempSync(join(dir, "home-"));
    const bin = join(root, ".outpost", "bin");
    return { platform: { ...linux, home: root }, bin, path: join(bin, `outpost-${agentSha}`) };
  }
  /** A directory with one fake tool, for a remote whose `cat` or `mv` misbehaves. */
  function fakeTool(name: string, body: string): string {
    const tools = mkdtempSync(join(dir, "tools-"));
    writeFileSync(join(tools, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return tools;
  }

  it("uploads through one script: 0755 under the final name in a 0700 directory, with progress, nothing else left", async () => {
    const { platform, bin, path } = home();
    const remote = localRemote();
    const progress: [number, number][] = [];
    const onProgress = (sent: number, total: number) => progress.push([sent, total]);
    expect(await deployOn(remote, platform, { ...options, onProgress })).toEqual({
      path,
      sha256: agentSha,
      uploaded: true,
    });
    expect(readFileSync(path)).toEqual(agentBytes);
    expect(statSync(path).mode & 0o777).toBe(0o755);
    expect(statSync(bin).mode & 0o777).toBe(0o700);
    expect(statSync(join(bin, "..")).mode & 0o777).toBe(0o700);
    expect(readdirSync(bin)).toEqual([`outpost-${agentSha}`]);
    expect(progress.at(-1)).toEqual([agentBytes.length, agentBytes.length]);
    // The hash, then the install: two commands, each the same fixed command line.
    expect(remote.commands).toEqual([SCRIPT_COMMAND, SCRIPT_COMMAND]);
  });

  it("uses a present agent that verifies, without uploading; replaces one that does not", async () => {
    const { platform, path } = home();
    await deployOn(localRemote(), platform, options);
    const remote = localRemote();
    expect(await deployOn(remote, platform, options)).toEqual({ path, sha256: agentSha, uploaded: false });
    expect(remote.commands).toHaveLength(1);
    writeFileSync(path, "tampered");
    expect((await deployOn(remote, platform, options)).uploaded).toBe(true);
    expect(readFileSync(path)).toEqual(agentBytes);
  });

  it("removes a corrupt upload and fails without renaming it", async () => {
    const { platform, bin, path } = home();
    const remote = localRemote([fakeTool("cat", "/bin/cat; echo corrupted")]);
    const error = await sshFailure(deployOn(remote, platform, options));
    expect(error).toMatchObject({ code: "deploy" });
    expect(error.message).toMatch(/uploaded agent is corrupt/);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(bin)).toEqual([]);
  });

  it("fails when the renamed agent does not verify", async () => {
    const { platform } = home();
    const error = await sshFailure(deployOn(localRemote([fakeTool("mv", "exit 0")]), platform, options));
    expect(error).toMatchObject({ code: "deploy" });
    expect(error.message).toMatch(/does not verify after upload/);
  });

  it("fails with the remote's words when the file cannot be written, or the script never ran", async () => {
    const { platform } = home();
    writeFileSync(join(platform.home, ".outpost"), "a file where the directory should be");
    const error = await sshFailure(deployOn(localRemote(), platform, options));
    expect(error).toMatchObject({ code: "deploy" });
    expect(error.message).toMatch(/Cannot upload the agent to .*File exists|Not a directory/);
    const silent = printing("");
    expect((await sshFailure(deployOn(silent, home().platform, options))).code).toBe("deploy");
  });

  it("deploys to Windows only through cmd.exe with SFTP hashing", async () => {
    const windows: RemotePlatform = { platform: "windows", arch: "x64", home: "C:\\Users\\u", shell: "posix" };
    const remote = printing("");
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
      sftp: {
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
      },
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
