/**
 * connectSsh end to end against a real OpenSSH server on 127.0.0.1 (the sshd fixture): host-key trust, deployment
 * and verification of the agent, reconnects, and the failures the SSH bootstrap must survive. This process's HOME
 * is a temp directory and every option names the fixture's own files, so the real ~/.ssh is never read.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needTool } from "../../tools/system-tools.js";
import type { ExecutionErrorCode, FileErrorCode } from "../src/contract/errors.js";
import { getOrThrow } from "../src/contract/result.js";
import { packagedAgent } from "../src/env/agent-binary.js";
import {
  acceptHostKey,
  connectSsh,
  deployAgent,
  detectPlatform,
  forgetHostKey,
  type SshEnvOptions,
  scanHostKey,
} from "../src/ssh/connect.js";
import { HostKeyChangedError, HostKeyUnknownError, SshError } from "../src/ssh/errors.js";
import { opensshCommand, runSsh } from "../src/ssh/openssh.js";
import { resolveRoute, type SshTargetOptions } from "../src/ssh/target.js";
import { isConnectionLost } from "../src/wire/connection.js";
import { output, sha256Of } from "./fixtures/env-output.js";
import { createUser, isolateHome, type Sshd, startSshd } from "./fixtures/sshd.js";

const run = promisify(execFile);
const none = { abortSignal: undefined };
const agentBytes = await readFile(packagedAgent());
const agentSha = createHash("sha256").update(agentBytes).digest("hex");

let sshd: Sshd;
let scratch: string;
let clientHome: string;
let counter = 0;

beforeAll(async () => {
  clientHome = await isolateHome();
  // Every test meets a server that greets with a banner, as many do.
  sshd = await startSshd({ banner: "Authorized use only.\nOUTPOST-PROBE\n" });
  scratch = await mkdtemp(join(tmpdir(), "outpost-ssh-test-"));
});

afterAll(async () => {
  await sshd?.stop();
  await rm(scratch, { recursive: true, force: true });
  await rm(clientHome, { recursive: true, force: true });
});

/** The fixture's options with a known-hosts file of this test's own (empty until accepted). */
function fresh(server: Sshd = sshd): SshEnvOptions {
  counter += 1;
  return { ...server.options, knownHostsFile: join(scratch, `known_hosts-${counter}`) };
}

async function trusted(server: Sshd = sshd): Promise<SshEnvOptions> {
  const options = fresh(server);
  getOrThrow(await acceptHostKey(server.target, server.fingerprint, options));
  return options;
}

function agentPathIn(home: string): string {
  return join(home, ".outpost", "bin", `outpost-${agentSha}`);
}

describe("host keys", () => {
  it("refuses an unknown host with the key's SHA-256 fingerprint and deploys nothing", async () => {
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const result = await connectSsh(sshd.target, fresh());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(HostKeyUnknownError);
    const error = result.error as HostKeyUnknownError;
    expect(error.fingerprint).toBe(sshd.fingerprint);
    expect(error.host).toBe(`[127.0.0.1]:${sshd.port}`);
    expect(existsSync(join(sshd.home, ".outpost"))).toBe(false);
  });

  it("scans the key and accepts only the fingerprint the server presents, once", async () => {
    const options = fresh();
    const scanned = getOrThrow(await scanHostKey(sshd.target, options));
    expect(scanned).toMatchObject({ host: `[127.0.0.1]:${sshd.port}`, fingerprint: sshd.fingerprint });
    expect(`${scanned.keyType} ${scanned.key}`).toBe(sshd.hostKey);

    const wrong = await acceptHostKey(sshd.target, `SHA256:${"A".repeat(43)}`, options);
    expect(wrong.ok ? undefined : wrong.error.code).toBe("fingerprint_mismatch");
    expect(existsSync(options.knownHostsFile!)).toBe(false);
    const malformed = await acceptHostKey(sshd.target, "MD5:00", options);
    expect(malformed.ok ? undefined : malformed.error.code).toBe("invalid");

    expect(getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, options)).added).toBe(true);
    expect(getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, options)).added).toBe(false);
    const lines = (await readFile(options.knownHostsFile!, "utf8")).trim().split("\n");
    expect(lines).toEqual([`[127.0.0.1]:${sshd.port} ${sshd.hostKey}`]);
    expect((await stat(options.knownHostsFile!)).mode & 0o777).toBe(0o600);
  });

  it("refuses a changed host key and never connects; forgetting and accepting the new key recovers", async () => {
    const server = await startSshd();
    try {
      const options = await trusted(server);
      const oldFingerprint = server.fingerprint;
      const connected = getOrThrow(await connectSsh(server.target, options));
      // A reconnect checks the key again: the live session is cut, and the next start meets the new key.
      for (const pid of await server.sessions()) process.kill(pid, "SIGKILL");
      await server.rotateHostKey();
      await connected.fileInfo("/", none);
      const refused = await connected.exec("echo never", {}, none);
      // The start failed, so the command's outcome is the lost connection's (`unknown`), with the reason.
      expect(refused.ok ? undefined : refused.error.code).toBe("unknown");
      expect(refused.ok ? "" : refused.error.message).toContain("changed");
      expect(connected.connection.lastStartError()).toBeInstanceOf(HostKeyChangedError);
      await connected.close();
      const result = await connectSsh(server.target, options);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toBeInstanceOf(HostKeyChangedError);
      expect((result.error as HostKeyChangedError).knownFingerprints).toEqual([oldFingerprint]);
      expect((result.error as HostKeyChangedError).fingerprint).toBe(server.fingerprint);
      const accept = await acceptHostKey(server.target, server.fingerprint, options);
      expect(accept.ok ? undefined : accept.error).toBeInstanceOf(HostKeyChangedError);

      getOrThrow(await forgetHostKey(server.target, options));
      getOrThrow(await acceptHostKey(server.target, server.fingerprint, options));
      const env = getOrThrow(await connectSsh(server.target, options));
      expect(await output(env, "echo ok")).toBe("ok\n");
      await env.close();
    } finally {
      await server.stop();
    }
  });

  it("negotiates the trusted key's type when the server has several, as OpenSSH does", async () => {
    // ssh2 would pick the server's ed25519 key first; only the RSA key is trusted.
    const second = join(scratch, "second_host_key");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", second]);
    const server = await startSshd({ hostKeyType: "rsa", config: [`HostKey ${second}`] });
    try {
      const options = fresh(server);
      // Written by hand: acceptHostKey takes the key the server presents to a client trusting nothing (ed25519).
      await writeFile(options.knownHostsFile!, `[127.0.0.1]:${server.port} ${server.hostKey}\n`);
      const env = getOrThrow(await connectSsh(server.target, options));
      expect(await output(env, "echo trusted")).toBe("trusted\n");
      await env.close();
    } finally {
      await server.stop();
    }
  });

  it("trusts hashed and [host]:port entries of a read-only known_hosts file and never writes it", async () => {
    const userFile = join(scratch, "user_known_hosts");
    await writeFile(userFile, `# a comment\n[127.0.0.1]:${sshd.port} ${sshd.hostKey}\n`);
    await run("ssh-keygen", ["-H", "-f", userFile]);
    await rm(`${userFile}.old`, { force: true });
    const hashed = await readFile(userFile, "utf8");
    expect(hashed).toMatch(/^\|1\|/m);
    expect(hashed).not.toContain("127.0.0.1");
    const options = { ...fresh(), trustedKnownHostsFiles: [userFile] };
    const env = getOrThrow(await connectSsh(sshd.target, options));
    expect(await output(env, "echo ok")).toBe("ok\n");
    await env.close();
    expect(await readFile(userFile, "utf8")).toBe(hashed);
    expect(existsSync(options.knownHostsFile!)).toBe(false);
  });

  it("never loses or corrupts an entry when several processes accept at once", async () => {
    const aliases = Array.from({ length: 12 }, (_, index) => `alias-${index}`);
    const config = join(scratch, "aliases_config");
    await writeFile(
      config,
      aliases
        .map((alias) =>
          [`Host ${alias}`, "  HostName 127.0.0.1", `  Port ${sshd.port}`, `  HostKeyAlias ${alias}`].join("\n"),
        )
        .join("\n"),
    );
    const file = join(scratch, "concurrent_known_hosts");
    const script = fileURLToPath(new URL("./fixtures/accept-host-key.ts", import.meta.url));
    // Four processes, each accepting its own aliases plus one shared alias that all of them accept.
    const groups = [0, 1, 2, 3].map((group) => [...aliases.filter((_, index) => index % 4 === group), "alias-0"]);
    const codes = await Promise.all(
      groups.map(
        (group) =>
          new Promise<number | null>((resolve) => {
            const child = spawn(
              process.execPath,
              ["--import", "tsx", script, file, config, sshd.fingerprint, ...group],
              { stdio: ["ignore", "inherit", "inherit"] },
            );
            child.on("exit", resolve);
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0]);
    const lines = (await readFile(file, "utf8")).trim().split("\n").sort();
    expect(lines).toEqual(aliases.map((alias) => `${alias} ${sshd.hostKey}`).sort());
    expect((await readdir(scratch)).filter((name) => name.startsWith("concurrent_known_hosts."))).toEqual([]);
  }, 60_000);
});

describe("deployment", () => {
  it("uploads the agent through a script as outpost-<sha256>, 0755 in a 0700 directory, and reuses it when it verifies", async () => {
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const options = await trusted();
    const progress: [number, number][] = [];
    const first = getOrThrow(
      await deployAgent(sshd.target, { ...options, onProgress: (sent, total) => progress.push([sent, total]) }),
    );
    expect(first).toEqual({ path: agentPathIn(sshd.home), sha256: agentSha, uploaded: true });
    expect(await sha256Of(first.path)).toBe(agentSha);
    expect((await stat(first.path)).mode & 0o777).toBe(0o755);
    expect((await stat(join(sshd.home, ".outpost", "bin"))).mode & 0o777).toBe(0o700);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toEqual([agentBytes.length, agentBytes.length]);
    expect(progress.every(([sent], index) => index === 0 || sent >= progress[index - 1][0])).toBe(true);
    // Only the final name is left: the temporary upload was renamed.
    expect(await readdir(join(sshd.home, ".outpost", "bin"))).toEqual([`outpost-${agentSha}`]);

    const before = (await stat(first.path)).mtimeMs;
    const again = getOrThrow(await deployAgent(sshd.target, options));
    expect(again.uploaded).toBe(false);
    expect((await stat(first.path)).mtimeMs).toBe(before);
    expect(getOrThrow(await detectPlatform(sshd.target, options))).toEqual({
      platform: "linux",
      arch: process.arch,
      home: sshd.home,
      shell: "posix",
    });
  });

  it("replaces a tampered or truncated agent before it starts, also when reconnecting after a loss", async () => {
    const options = await trusted();
    const path = agentPathIn(sshd.home);
    getOrThrow(await deployAgent(sshd.target, options));
    // A binary that would leave evidence if it ever ran.
    const evidence = join(scratch, "tampered-ran");
    // Replaced as an attacker would (a new file under the name), since an agent may still run the old one.
    await rm(path);
    await writeFile(path, `#!/bin/sh\ntouch '${evidence}'\n`, { mode: 0o755 });
    const env = getOrThrow(await connectSsh(sshd.target, options));
    expect(env.connection.deployed()?.uploaded).toBe(true);
    expect(await sha256Of(path)).toBe(agentSha);

    // Lose the connection, truncate the binary (the running agent keeps its open file), then use the env again.
    for (const pid of await sshd.sessions()) process.kill(pid, "SIGKILL");
    await rm(path);
    await writeFile(path, agentBytes.subarray(0, 1000), { mode: 0o755 });
    const lost = await env.fileInfo("/", none);
    // The first call after the kill may still meet the dead session, or already the next one.
    if (!lost.ok) expect(lost.error.code).toBe("unknown");
    expect(await output(env, "echo again")).toBe("again\n");
    expect(env.connection.deployed()?.uploaded).toBe(true);
    expect(await sha256Of(path)).toBe(agentSha);
    expect(existsSync(evidence)).toBe(false);
    await env.close();
  });

  it("after an upload removes agents of other versions but the previous and running ones, and old upload leftovers [SSH2]", async () => {
    const options = await trusted();
    const bin = join(sshd.home, ".outpost", "bin");
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    await mkdir(bin, { recursive: true, mode: 0o700 });
    const sha = (digit: string) => digit.repeat(64);
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    // An older and a newer other version, one that is running (a copy of sleep), a file that only looks similar,
    // and an old and a fresh upload leftover.
    for (const [name, age] of [
      [`outpost-${sha("a")}`, 3],
      [`outpost-${sha("b")}`, 2],
      ["outpost-notes.txt", 4],
      [`.outpost-${sha("d")}.0123456789ab.tmp`, 2],
      [`.outpost-${sha("e")}.0123456789ab.tmp`, 0],
    ] as const) {
      await writeFile(join(bin, name), "old\n", { mode: 0o755 });
      await utimes(join(bin, name), hoursAgo(age), hoursAgo(age));
    }
    const runningPath = join(bin, `outpost-${sha("c")}`);
    await copyFile("/bin/sleep", runningPath);
    await chmod(runningPath, 0o755);
    await utimes(runningPath, hoursAgo(5), hoursAgo(5));
    const runningAgent = spawn(runningPath, ["60"], { stdio: "ignore" });
    try {
      await new Promise((resolve) => runningAgent.once("spawn", resolve));
      expect(getOrThrow(await deployAgent(sshd.target, options)).uploaded).toBe(true);
      expect((await readdir(bin)).sort()).toEqual(
        [
          `.outpost-${sha("e")}.0123456789ab.tmp`,
          `outpost-${agentSha}`,
          `outpost-${sha("b")}`,
          `outpost-${sha("c")}`,
          "outpost-notes.txt",
        ].sort(),
      );
    } finally {
      runningAgent.kill("SIGKILL");
    }
    // Only an upload cleans up: a start that finds its agent verified leaves the directory as it is.
    expect(getOrThrow(await deployAgent(sshd.target, options)).uploaded).toBe(false);
    expect(existsSync(runningPath)).toBe(true);
  });

  it("a connection dropped during the upload never leaves a half-written binary under the name that runs", async () => {
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const options = await trusted();
    let killed = false;
    const dropped = await deployAgent(sshd.target, {
      ...options,
      onProgress: (sent, total) => {
        if (killed || sent >= total) return;
        killed = true;
        void sshd.sessions().then((pids) => {
          for (const pid of pids) process.kill(pid, "SIGKILL");
        });
      },
    });
    expect(killed).toBe(true);
    expect(dropped.ok ? undefined : dropped.error).toBeInstanceOf(SshError);
    expect(existsSync(agentPathIn(sshd.home))).toBe(false);
    const env = getOrThrow(await connectSsh(sshd.target, options));
    expect(env.connection.deployed()).toMatchObject({ uploaded: true, sha256: agentSha });
    expect(await sha256Of(agentPathIn(sshd.home))).toBe(agentSha);
    await env.close();
  });
});

describe("sessions", () => {
  it("an env made with the host's error classes returns them for file and command failures", async () => {
    class HostFileError extends Error {
      override readonly name = "FileError";
      path: string | undefined;
      constructor(
        readonly code: FileErrorCode,
        message: string,
        path?: string,
        cause?: Error,
      ) {
        super(message, cause === undefined ? undefined : { cause });
        this.path = path;
      }
    }
    class HostExecutionError extends Error {
      override readonly name = "ExecutionError";
      spillPath?: string;
      constructor(
        readonly code: ExecutionErrorCode,
        message: string,
        cause?: Error,
      ) {
        super(message, cause === undefined ? undefined : { cause });
      }
    }
    const errors = { FileError: HostFileError, ExecutionError: HostExecutionError };
    const env = getOrThrow(await connectSsh(sshd.target, { ...(await trusted()), errors }));
    try {
      const missing = await env.readTextFile("outpost-missing-file", none);
      expect(missing.ok ? undefined : missing.error).toBeInstanceOf(HostFileError);
      expect(missing.ok ? undefined : missing.error.code).toBe("not_found");
      const timedOut = await env.exec("sleep 5", { timeout: 0.3 }, none);
      expect(timedOut.ok ? undefined : timedOut.error).toBeInstanceOf(HostExecutionError);
      expect(timedOut.ok ? undefined : timedOut.error.code).toBe("timeout");
    } finally {
      await env.close();
    }
  });

  it("a killed SSH connection fails the running exec as lost, leaves no process behind, and the next call reconnects", async () => {
    const options = await trusted();
    const env = getOrThrow(await connectSsh(sshd.target, options));
    const marker = `outpost-ssh-orphan-${process.pid}-${Date.now()}`;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = env.exec(`echo started; exec sleep 30 # ${marker}`, { onOutput: () => started() }, none);
    await running;
    for (const pid of await sshd.sessions()) process.kill(pid, "SIGKILL");
    const result = await pending;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe("unknown");
    // The agent sees its input end and kills its commands: nothing with the marker survives.
    const deadline = Date.now() + 10_000;
    let left = "";
    do {
      left = (await run("ps", ["-eo", "pid=,args="])).stdout
        .split("\n")
        .filter((line) => line.includes(marker))
        .join("\n");
      if (left === "") break;
      await new Promise((done) => setTimeout(done, 100));
    } while (Date.now() < deadline);
    expect(left).toBe("");
    expect(await output(env, "echo back")).toBe("back\n");
    await env.close();
  });

  for (const transport of ["ssh2", "openssh"] as const) {
    it(`with ServerAliveInterval, a server that stops answering is lost by the keepalives, then the next call reconnects (${transport}) [SSH4]`, async () => {
      const interval = 1;
      const countMax = 2;
      const options = { ...(await trusted()), transport, serverAliveInterval: interval, serverAliveCountMax: countMax };
      const env = getOrThrow(await connectSsh(sshd.target, options));
      expect(await output(env, "echo alive")).toBe("alive\n");
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const pending = env.exec("echo started; exec sleep 60", { onOutput: () => started() }, none);
      await running;
      // The server's session processes stop but the TCP connection stays up: only keepalives can tell.
      const stopped = await sshd.sessions();
      for (const pid of stopped) process.kill(pid, "SIGSTOP");
      const since = Date.now();
      try {
        const result = await pending;
        const lostAfterMs = Date.now() - since;
        expect(result.ok ? undefined : result.error.code).toBe("unknown");
        // ssh2 and OpenSSH both give up after countMax unanswered keepalives, one interval after the last; the
        // agent link's own silence limit (30 s) would take far longer. Slack for a loaded machine.
        expect(lostAfterMs).toBeGreaterThanOrEqual((interval * countMax - 0.5) * 1000);
        expect(lostAfterMs).toBeLessThan((interval * (countMax + 1) + 2.5) * 1000);
      } finally {
        for (const pid of stopped) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
      }
      expect(await output(env, "echo reconnected")).toBe("reconnected\n");
      await env.close();
    }, 30_000);
  }

  it("an idle SSH env never keeps the host process alive", async () => {
    const options = await trusted();
    const script = fileURLToPath(new URL("./fixtures/ssh-idle.ts", import.meta.url));
    const started = Date.now();
    const { stdout } = await run(process.execPath, ["--import", "tsx", script, sshd.target, JSON.stringify(options)], {
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe("ran");
    // Well before the agent's 30 s silence limit could end the session from the other side.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("ends its SSH connection on close, as detectPlatform and deployAgent end theirs; the env's id names the target", async () => {
    const options = await trusted();
    /** The server's session count once it has settled (sessions end a moment after the client leaves). */
    const settled = async (): Promise<number> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const count = (await sshd.sessions()).length;
        if (count === 0 || Date.now() > deadline) return count;
        await new Promise((done) => setTimeout(done, 50));
      }
    };
    expect(await settled()).toBe(0);
    getOrThrow(await detectPlatform(sshd.target, options));
    expect(await settled()).toBe(0);
    getOrThrow(await deployAgent(sshd.target, options));
    expect(await settled()).toBe(0);
    const env = getOrThrow(await connectSsh(sshd.target, options));
    expect(env.id).toBe(`outpost:ssh:${sshd.target}`);
    expect(await output(env, "echo up")).toBe("up\n");
    expect((await sshd.sessions()).length).toBeGreaterThan(0);
    await env.close();
    expect(await settled()).toBe(0);
    const named = getOrThrow(await connectSsh(sshd.target, { ...options, id: "build-box" }));
    expect(named.id).toBe("build-box");
    await named.close();
    expect(await settled()).toBe(0);
  });

  it("reports the remote's home and runs commands there with the account's environment", async () => {
    const env = getOrThrow(await connectSsh(sshd.target, await trusted()));
    expect(env.cwd).toBe(sshd.home);
    const info = await env.connection.info();
    expect(info.home).toBe(sshd.home);
    expect(await output(env, 'printf %s "$HOME"')).toBe(sshd.home);
    await env.close();
  });
});

describe("login shells", () => {
  it("passes a chatty .bashrc's output to onLog and still connects", async () => {
    const bashrc = join(sshd.home, ".bashrc");
    await writeFile(bashrc, "echo 'hello from .bashrc'\necho 'OUTPOST-PROBE'\necho 'PI-ENV 00'\necho noise >&2\n");
    try {
      const logs: string[] = [];
      const env = getOrThrow(await connectSsh(sshd.target, { ...(await trusted()), onLog: (text) => logs.push(text) }));
      expect(env.platform.home).toBe(sshd.home);
      expect(await output(env, "echo ok")).toBe("ok\n");
      expect(logs.join("\n")).toContain("hello from .bashrc");
      await env.close();
    } finally {
      await rm(bashrc, { force: true });
    }
  });

  it("fails with a clear platform error when the shell swallows the probe", async () => {
    const bashrc = join(sshd.home, ".bashrc");
    await writeFile(bashrc, "echo 'garbled banner'\nexit 0\n");
    try {
      const result = await connectSsh(sshd.target, await trusted());
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.code).toBe("platform");
      expect(result.error.message).toContain("garbled banner");
    } finally {
      await rm(bashrc, { force: true });
    }
  });

  it("commands over SSH see no SSH_CLIENT/SSH_CONNECTION, so bash -c does not read ~/.bashrc again [SSH1]", async () => {
    const bashrc = join(sshd.home, ".bashrc");
    const reads = join(scratch, "bashrc-reads");
    await writeFile(bashrc, `echo read >> '${reads}'\nexport OUTPOST_BASHRC=read\n`);
    try {
      const env = getOrThrow(await connectSsh(sshd.target, await trusted()));
      const count = async () => (await readFile(reads, "utf8")).split("\n").filter(Boolean).length;
      const before = await count();
      // The account's shell read .bashrc once to start the agent (sshd set SSH_CLIENT for it), as for `ssh host cmd`.
      expect(await output(env, 'printf "%s\\n" "$OUTPOST_BASHRC"')).toBe("read\n");
      expect(await output(env, "env | grep -E '^(SSH_CLIENT|SSH_CONNECTION|SSH2_CLIENT|SSH_TTY)='; true")).toBe("");
      expect(await output(env, "bash -c true; true")).toBe("");
      expect(await count()).toBe(before);
      // With the variable back, the same bash -c reads .bashrc: this is what the rule prevents.
      expect(await output(env, "SSH_CLIENT='127.0.0.1 1 22' bash -c true")).toBe("");
      expect(await count()).toBe(before + 1);
      await env.close();
    } finally {
      await rm(bashrc, { force: true });
    }
  });
});

describe("the OpenSSH transport", () => {
  it("refuses the same unknown key, deploys the same way and runs the agent through the system ssh", async () => {
    const options = { ...fresh(), transport: "openssh" as const };
    const refused = await connectSsh(sshd.target, options);
    expect(refused.ok ? undefined : refused.error).toBeInstanceOf(HostKeyUnknownError);
    getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, options));
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const progress: number[] = [];
    const env = getOrThrow(await connectSsh(sshd.target, { ...options, onProgress: (sent) => progress.push(sent) }));
    expect(env.connection.deployed()).toEqual({ path: agentPathIn(sshd.home), sha256: agentSha, uploaded: true });
    expect(progress.at(-1)).toBe(agentBytes.length);
    expect((await stat(join(sshd.home, ".outpost", "bin"))).mode & 0o777).toBe(0o700);
    expect((await stat(agentPathIn(sshd.home))).mode & 0o777).toBe(0o755);
    expect(await output(env, "echo over openssh")).toBe("over openssh\n");
    expect(await output(env, "env | grep -E '^(SSH_CLIENT|SSH_CONNECTION)='; true")).toBe("");
    for (const pid of await sshd.sessions()) process.kill(pid, "SIGKILL");
    await env.fileInfo("/", none);
    expect(await output(env, "echo reconnected")).toBe("reconnected\n");
    expect(env.connection.deployed()?.uploaded).toBe(false);
    await env.close();
    // The steps really go through the program: a missing one fails the connection.
    const missing = await connectSsh(sshd.target, { ...options, sshProgram: join(scratch, "no-such-ssh") });
    expect(missing.ok ? undefined : missing.error.code).toBe("connect");
  });
});

describe("jump hosts", () => {
  /** An ssh config naming the target `outpost-target`, reached through `jump` as `outpost-jump`. */
  async function jumpConfig(jump: Sshd, name: string): Promise<string> {
    const config = join(scratch, name);
    await writeFile(
      config,
      [
        "Host outpost-target",
        "  HostName 127.0.0.1",
        `  Port ${sshd.port}`,
        `  User ${sshd.target.split("@")[0]}`,
        "  ProxyJump outpost-jump",
        "Host outpost-jump",
        "  HostName 127.0.0.1",
        `  Port ${jump.port}`,
        `  User ${jump.target.split("@")[0]}`,
        `  IdentityFile ${jump.clientKey}`,
        "",
      ].join("\n"),
    );
    return config;
  }

  it("reaches the target through a ProxyJump host from the ssh config, each hop's key checked on both transports [SSH4]", async () => {
    const jump = await startSshd();
    try {
      const options = { ...fresh(), configFile: await jumpConfig(jump, "jump_config") };
      const jumpName = `[127.0.0.1]:${jump.port}`;
      // The jump host's key is not trusted yet: nothing gets through it.
      const untrusted = await scanHostKey("outpost-target", options);
      expect(untrusted.ok ? undefined : untrusted.error).toBeInstanceOf(HostKeyUnknownError);
      expect(untrusted.ok ? undefined : (untrusted.error as HostKeyUnknownError).host).toBe(jumpName);
      // Not even with the target itself trusted, on either transport.
      getOrThrow(await acceptHostKey("outpost-target", sshd.fingerprint, { ...options, proxyJump: false }));
      for (const transport of ["ssh2", "openssh"] as const) {
        const refused = await connectSsh("outpost-target", { ...options, transport });
        expect(refused.ok ? undefined : refused.error, transport).toBeInstanceOf(HostKeyUnknownError);
        expect(refused.ok ? undefined : (refused.error as HostKeyUnknownError).host, transport).toBe(jumpName);
      }
      // The system ssh checks every hop itself too, against Outpost's files (not the user's defaults).
      const route = await resolveRoute("outpost-target", options);
      const ssh = opensshCommand("ssh", "outpost-target", options, route);
      const direct = await runSsh(ssh, "echo through", undefined, 30_000);
      expect(direct.code).toBe(255);
      expect(direct.stderr).toContain("Host key verification failed");

      getOrThrow(await acceptHostKey("outpost-jump", jump.fingerprint, { ...options, proxyJump: false }));
      const scanned = getOrThrow(await scanHostKey("outpost-target", options));
      expect(scanned.fingerprint).toBe(sshd.fingerprint);
      expect(await runSsh(ssh, "echo through", undefined, 30_000)).toMatchObject({ code: 0, stdout: "through\n" });

      for (const transport of ["ssh2", "openssh"] as const) {
        const env = getOrThrow(await connectSsh("outpost-target", { ...options, transport }));
        expect(await output(env, "echo through")).toBe("through\n");
        expect((await jump.sessions()).length, transport).toBeGreaterThan(0);
        await env.close();
      }
      // Two jumps (the same server twice) nest one ProxyCommand in another; a trust file named with `%`, a space
      // and a quote survives both levels of quoting and token expansion.
      const odd = join(scratch, "odd % dir 'q'");
      await mkdir(odd, { recursive: true });
      const oddKnownHosts = join(odd, "known_hosts");
      await writeFile(oddKnownHosts, await readFile(options.knownHostsFile!));
      const twice = { ...options, knownHostsFile: oddKnownHosts, proxyJump: "outpost-jump,outpost-jump" };
      const nested = opensshCommand("ssh", "outpost-target", twice, await resolveRoute("outpost-target", twice));
      expect(await runSsh(nested, "echo twice", undefined, 30_000)).toMatchObject({ code: 0, stdout: "twice\n" });
    } finally {
      await jump.stop();
    }
  });

  it("goes only through the jump host: one that refuses to forward fails the connection as connect", async () => {
    // The target is reachable directly here too, so a client that skipped the jump would connect.
    const jump = await startSshd({ config: ["AllowTcpForwarding no"] });
    try {
      const options = { ...fresh(), configFile: await jumpConfig(jump, "closed_jump_config") };
      getOrThrow(await acceptHostKey("outpost-jump", jump.fingerprint, { ...options, proxyJump: false }));
      getOrThrow(await acceptHostKey("outpost-target", sshd.fingerprint, { ...options, proxyJump: false }));
      const scanned = await scanHostKey("outpost-target", options);
      expect(scanned.ok ? "ok" : scanned.error.code).toBe("connect");
      const connected = await connectSsh("outpost-target", options);
      expect(connected.ok ? "ok" : connected.error.code).toBe("connect");
      if (connected.ok) await connected.value.close();
    } finally {
      await jump.stop();
    }
  });
});

describe("accounts", () => {
  // Creating accounts needs root, as CI runs; the home and the name carry every character a shell would expand.
  it.runIf(process.getuid?.() === 0)(
    "a zsh account named with $ and a home with spaces, a quote and $HOME in it, whose .zshenv prints",
    async () => {
      const name = `outpost-z${process.pid % 1000}$`;
      const home = join(scratch, "home with spaces", "it's $HOME");
      await chmod(scratch, 0o755);
      const remove = await createUser(name, home, "/bin/zsh");
      try {
        await writeFile(join(home, ".zshenv"), "echo 'hello from .zshenv'\n");
        await run("chown", ["-R", `${name}:`, join(scratch, "home with spaces")]);
        const target = `${name}@127.0.0.1:${sshd.port}`;
        const options = fresh();
        getOrThrow(await acceptHostKey(target, sshd.fingerprint, options));
        const logs: string[] = [];
        const env = getOrThrow(await connectSsh(target, { ...options, onLog: (text) => logs.push(text) }));
        expect(env.platform.home).toBe(home);
        expect(env.connection.deployed()?.path).toBe(agentPathIn(home));
        expect(await sha256Of(agentPathIn(home))).toBe(agentSha);
        expect(logs.join("\n")).toContain("hello from .zshenv");
        expect(await output(env, 'printf "%s|%s" "$(id -un)" "$HOME"')).toBe(`${name}|${home}`);
        getOrThrow(await env.writeFile("~/note.txt", "written over SSH", none));
        expect(await readFile(join(home, "note.txt"), "utf8")).toBe("written over SSH");
        await env.close();
      } finally {
        await remove();
      }
    },
  );
});

describe("authentication", () => {
  it("uses keys held by an ssh-agent", async () => {
    const socket = join(scratch, "agent.sock");
    const agent = spawn(needTool("ssh-agent"), ["-D", "-a", socket], { stdio: "ignore" });
    try {
      const deadline = Date.now() + 5000;
      while (!existsSync(socket) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
      await run("ssh-add", [sshd.clientKey], { env: { ...process.env, SSH_AUTH_SOCK: socket } });
      const options = { ...(await trusted()), identityFiles: [], agent: socket };
      const env = getOrThrow(await connectSsh(sshd.target, options));
      expect(await output(env, "echo agent")).toBe("agent\n");
      await env.close();
      const without = await connectSsh(sshd.target, { ...options, agent: false });
      expect(without.ok ? undefined : without.error.code).toBe("auth");
    } finally {
      agent.kill();
    }
  });

  it.runIf(process.getuid?.() === 0)(
    "answers keyboard-interactive prompts (PAM) through the password callback, the server's prompt passed on",
    async () => {
      const server = await startSshd({ pam: true, config: ["AuthenticationMethods keyboard-interactive"] });
      const name = `outpost-ki${process.pid % 1000}`;
      const home = join(server.dir, "ki-home");
      const hash = (await run(needTool("openssl"), ["passwd", "-6", "k i"])).stdout.trim();
      const remove = await createUser(name, home, "/bin/bash", hash);
      try {
        const target = `${name}@127.0.0.1:${server.port}`;
        const options = { ...(await trusted(server)), identityFiles: [] };
        const wrong = await connectSsh(target, { ...options, password: () => "wrong" });
        expect(wrong.ok ? undefined : wrong.error.code).toBe("auth");
        const prompts: string[] = [];
        const env = getOrThrow(
          await connectSsh(target, {
            ...options,
            password: ({ user, prompt }) => {
              prompts.push(`${user} ${prompt}`);
              return "k i";
            },
          }),
        );
        // PAM's own prompt (password authentication is not offered, so this came through keyboard-interactive).
        expect(prompts).toEqual([`${name} Password: `]);
        expect(await output(env, "id -un")).toBe(`${name}\n`);
        await env.close();
      } finally {
        await remove();
        await server.stop();
      }
    },
    30_000,
  );

  it.runIf(process.getuid?.() === 0)("asks the password callback for password authentication", async () => {
    const server = await startSshd({ config: ["PasswordAuthentication yes"] });
    const name = `outpost-pw${process.pid % 1000}`;
    const home = join(server.dir, "pw-home");
    const hash = (await run(needTool("openssl"), ["passwd", "-6", "pa ss"])).stdout.trim();
    const remove = await createUser(name, home, "/bin/bash", hash);
    try {
      const target = `${name}@127.0.0.1:${server.port}`;
      const options = { ...(await trusted(server)), identityFiles: [] };
      const prompts: string[] = [];
      const wrong = await connectSsh(target, { ...options, password: () => "wrong" });
      expect(wrong.ok ? undefined : wrong.error.code).toBe("auth");
      const env = getOrThrow(
        await connectSsh(target, {
          ...options,
          password: ({ user, prompt }) => {
            prompts.push(`${user} ${prompt}`);
            return "pa ss";
          },
        }),
      );
      expect(prompts[0]).toBe(`${name} Password:`);
      expect(await output(env, "id -un")).toBe(`${name}\n`);
      await env.close();
    } finally {
      await remove();
      await server.stop();
    }
  });
});

describe("options", () => {
  it("rejects malformed targets and options with invalid", async () => {
    const bad: [string, SshTargetOptions][] = [
      ["", {}],
      ["-oProxyCommand=x", {}],
      ["user@host:0", {}],
      ["user@host:http", {}],
      ["us er@host", {}],
      ["host", { port: 70000 }],
      ["host", { connectTimeout: -1 }],
      ["host", { identityFiles: [""] }],
      ["host", { agent: "" }],
    ];
    for (const [target, options] of bad) {
      const result = await connectSsh(target, options);
      expect(result.ok ? undefined : result.error.code, `${target} ${JSON.stringify(options)}`).toBe("invalid");
    }
  });

  it("authenticates with an encrypted key through the passphrase callback", async () => {
    const key = join(scratch, "encrypted_key");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "s3cret", "-f", key]);
    const authorized = join(sshd.dir, "authorized_keys");
    await writeFile(authorized, `${await readFile(authorized, "utf8")}${await readFile(`${key}.pub`, "utf8")}`);
    const asked: string[] = [];
    const options = { ...(await trusted()), identityFiles: [key] };
    const refused = await connectSsh(sshd.target, { ...options, passphrase: () => undefined });
    expect(refused.ok ? undefined : refused.error.code).toBe("auth");
    const env = getOrThrow(
      await connectSsh(sshd.target, {
        ...options,
        passphrase: (file) => {
          asked.push(file);
          return "s3cret";
        },
      }),
    );
    expect(asked).toContain(key);
    expect(await output(env, "echo ok")).toBe("ok\n");
    await env.close();
  });
});

describe("connection errors", () => {
  it("reports an unreachable port as connect", async () => {
    const server = await startSshd();
    const target = server.target;
    const options = { ...fresh(server), configFile: false as const };
    await server.stop();
    const result = await scanHostKey(target, options);
    expect(result.ok ? undefined : result.error.code).toBe("connect");
  });

  it("gives up on a server that never completes the handshake after connectTimeout", async () => {
    const silent = createServer((socket) => socket.on("error", () => {}));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const started = Date.now();
      const result = await scanHostKey(`me@127.0.0.1:${port}`, { ...fresh(), configFile: false, connectTimeout: 1 });
      expect(result.ok ? undefined : result.error.code).toBe("connect");
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it("a lazy env reports a failed start as the call's error and lost flag, then recovers once trusted", async () => {
    const { sshConnection } = await import("../src/ssh/connect.js");
    const options = fresh();
    const connection = getOrThrow(sshConnection(sshd.target, options));
    await expect(connection.info()).rejects.toSatisfy((error: unknown) => isConnectionLost(error));
    expect(connection.lastStartError()).toBeInstanceOf(HostKeyUnknownError);
    getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, options));
    expect((await connection.info()).home).toBe(sshd.home);
    await connection.close();
  });
});
