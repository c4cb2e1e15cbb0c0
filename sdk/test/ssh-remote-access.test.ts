/**
 * The ssh2 transport's remote operations (`ssh2Access`, `runRemote`, `whileConnected`) against Debian's sshd on
 * 127.0.0.1, on an ssh2 client opened here: what a command printed on each stream and how it ended, time limits,
 * a dropped connection, and SFTP's directory creation, modes, progress, renames, removals and hashing, with the
 * failures a real server gives (a file where a directory should be, a missing source). ssh.e2e.test.ts drives the
 * same code through connectSsh; this file reaches the branches a deployment does not.
 */
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SftpAccess, ssh2Access } from "../src/ssh/remote-access.js";
import { afterMarker, runRemote, whileConnected } from "../src/ssh/remote-command.js";
import { sshFailure } from "./fixtures/ssh-failure.js";
import { type Sshd, startSshd } from "./fixtures/sshd.js";

let sshd: Sshd;
let scratch: string;
let local: string;
const localBytes = Buffer.alloc(300_000, 7);

beforeAll(async () => {
  sshd = await startSshd();
  scratch = await mkdtemp(join(tmpdir(), "outpost-remote-access-"));
  local = join(scratch, "local-agent");
  await writeFile(local, localBytes);
});

afterAll(async () => {
  await sshd?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function connect(): Promise<Client> {
  const client = new Client();
  const user = sshd.target.slice(0, sshd.target.indexOf("@"));
  await new Promise<void>((resolve, reject) => {
    client.once("ready", resolve).once("error", reject);
    client.connect({
      host: "127.0.0.1",
      port: sshd.port,
      username: user,
      privateKey: readFileSync(sshd.clientKey),
      hostVerifier: () => true,
    });
  });
  return client;
}

async function withClient(use: (client: Client) => Promise<void>): Promise<void> {
  const client = await connect();
  try {
    await use(client);
  } finally {
    client.end();
  }
}

describe("runRemote", () => {
  it("keeps stdout and stderr apart and gives the exit code; a signal gives null", async () => {
    await withClient(async (client) => {
      expect(await runRemote(client, "printf out; printf err >&2; exit 3")).toEqual({
        stdout: "out",
        stderr: "err",
        code: 3,
      });
      expect(await runRemote(client, "true")).toEqual({ stdout: "", stderr: "", code: 0 });
      expect((await runRemote(client, "kill -9 $$")).code).toBeNull();
    });
  });

  it("ends the command's input at once, and fails a command that outlives its time limit", async () => {
    await withClient(async (client) => {
      expect((await runRemote(client, "cat; echo done")).stdout).toBe("done\n");
      // Given input, it is written (here more than a channel window) and ended by the writer.
      const bytes = Buffer.alloc(3_000_000, 7);
      expect((await runRemote(client, "wc -c", (stdin) => stdin.end(bytes))).stdout.trim()).toBe(String(bytes.length));
      const started = Date.now();
      const error = await sshFailure(runRemote(client, "sleep 5", undefined, 300));
      expect(error.code).toBe("remote");
      expect(error.message).toMatch(/did not finish within 0.3 s/);
      expect(Date.now() - started).toBeLessThan(4000);
    });
  });

  it("closes the channel of a command that outlives its time limit", async () => {
    await withClient(async (client) => {
      const marker = `utpost-timeout-${process.pid}-${Date.now()}`;
      // The loop dies of a broken pipe once its channel is closed, and lives on while it stays open.
      const loop = `sh -c 'while echo o${marker}; do sleep 0.1; done'`;
      expect((await sshFailure(runRemote(client, loop, undefined, 300))).code).toBe("remote");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // "[o]…" matches the loop's command line but not that of the shell running pgrep.
      expect((await runRemote(client, `pgrep -f '[o]${marker}' || echo none`)).stdout).toBe("none\n");
    });
  });

  it("fails with remote when the connection drops while the command runs, or cannot open a channel", async () => {
    const client = await connect();
    const running = runRemote(client, "sleep 5");
    const watched = whileConnected(client, runRemote(client, "sleep 5"));
    setTimeout(() => client.destroy(), 200);
    for (const error of [await sshFailure(running), await sshFailure(watched)]) expect(error.code).toBe("remote");
    // On a closed connection ssh2 throws rather than calling back: still an SshError.
    expect((await sshFailure(runRemote(client, "true"))).code).toBe("remote");
    expect((await sshFailure(sftpOf(client).remove(local))).code).toBe("deploy");
  });

  it("whileConnected passes results through and stops listening once the work settles", async () => {
    await withClient(async (client) => {
      const before = client.listenerCount("close");
      expect(await whileConnected(client, Promise.resolve(5))).toBe(5);
      await expect(whileConnected(client, Promise.reject(new Error("own")))).rejects.toThrow("own");
      expect(client.listenerCount("close")).toBe(before);
    });
  });

  it("hears a command's output, exit and close that ssh2 emits in the same turn as the exec callback", async () => {
    // ssh2 handles every packet of a chunk in one go: a short command's exit status and close may follow the
    // exec reply at once, before any promise callback runs.
    const channel = Object.assign(new EventEmitter(), { stderr: new EventEmitter(), end() {}, close() {} });
    const client = {
      exec(_command: string, callback: (error: undefined, value: typeof channel) => void) {
        callback(undefined, channel);
        channel.emit("data", Buffer.from("out"));
        channel.stderr.emit("data", Buffer.from("err"));
        channel.emit("exit", 4);
        channel.emit("close");
      },
    };
    expect(await runRemote(client as unknown as Client, "true")).toEqual({ stdout: "out", stderr: "err", code: 4 });
  });

  it("afterMarker gives the lines after the last marker line", () => {
    expect(afterMarker("noise\nM\nold\nM\nnew\r\nlast", "M")).toEqual(["new", "last"]);
    expect(afterMarker("M x\nnothing", "M")).toBeUndefined();
  });
});

/** ssh2Access's SFTP side (Windows through cmd.exe uses it). */
function sftpOf(client: Client): SftpAccess {
  const sftp = ssh2Access(client).sftp;
  if (sftp === undefined) throw new Error("ssh2Access offers SFTP");
  return sftp;
}

describe("ssh2Access over SFTP", () => {
  it("put creates the directory and its parent, restricts it to 0700 and writes the file 0755, with progress", async () => {
    await withClient(async (client) => {
      const access = sftpOf(client);
      await mkdir(join(scratch, "put"));
      const parent = join(scratch, "put", ".outpost");
      const dir = join(parent, "bin");
      const progress: Array<[number, number]> = [];
      await access.put(local, localBytes.length, dir, join(dir, "temp"), (sent, total) => progress.push([sent, total]));
      expect(await readFile(join(dir, "temp"))).toEqual(localBytes);
      expect((await stat(join(dir, "temp"))).mode & 0o777).toBe(0o755);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(parent)).mode & 0o777).toBe(0o700);
      expect(progress.at(-1)).toEqual([localBytes.length, localBytes.length]);
      // Existing directories are kept, a too open one restricted again, an existing file replaced.
      await chmod(dir, 0o755);
      await writeFile(join(dir, "temp"), "old", { mode: 0o600 });
      await access.put(local, localBytes.length, dir, join(dir, "temp"));
      expect(await readFile(join(dir, "temp"))).toEqual(localBytes);
      expect((await stat(join(dir, "temp"))).mode & 0o777).toBe(0o755);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
    });
  });

  it("put fails with deploy when a file stands where a directory should be", async () => {
    await withClient(async (client) => {
      const access = sftpOf(client);
      const base = join(scratch, "blocked");
      await mkdir(base, { recursive: true });
      await writeFile(join(base, ".outpost"), "a file");
      const error = await sshFailure(
        access.put(local, 1, join(base, ".outpost", "bin"), join(base, ".outpost", "bin", "t")),
      );
      expect(error.code).toBe("deploy");
      await mkdir(join(base, "two", ".outpost"), { recursive: true });
      await writeFile(join(base, "two", ".outpost", "bin"), "a file");
      const second = join(base, "two", ".outpost", "bin");
      expect((await sshFailure(access.put(local, 1, second, join(second, "t")))).code).toBe("deploy");
    });
  });

  it("rename replaces the target; a missing source fails with deploy; remove ignores a missing file", async () => {
    await withClient(async (client) => {
      const access = sftpOf(client);
      const dir = join(scratch, "rename");
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "from"), "new");
      await writeFile(join(dir, "to"), "old");
      await access.rename(join(dir, "from"), join(dir, "to"));
      expect(await readFile(join(dir, "to"), "utf8")).toBe("new");
      expect((await sshFailure(access.rename(join(dir, "from"), join(dir, "to")))).code).toBe("deploy");
      await access.remove(join(dir, "to"));
      await expect(stat(join(dir, "to"))).rejects.toMatchObject({ code: "ENOENT" });
      await access.remove(join(dir, "to"));
    });
  });

  it("sha256 hashes a file's bytes here; a missing path or a directory is missing", async () => {
    await withClient(async (client) => {
      const access = sftpOf(client);
      const sha256 = access.sha256;
      const expected = createHash("sha256").update(localBytes).digest("hex");
      expect(await sha256(local)).toBe(expected);
      expect(await sha256(join(scratch, "nothing-here"))).toBe("missing");
      expect(await sha256(scratch)).toBe("missing");
      const empty = join(scratch, "empty");
      await writeFile(empty, "");
      expect(await sha256(empty)).toBe(createHash("sha256").digest("hex"));
    });
  });
});
