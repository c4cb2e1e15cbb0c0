/**
 * The key files a host names and what an authentication failure says. A key file given in `identityFiles` that
 * cannot be read fails as `config`, naming the file, before any connection (a TCP listener counts them), on both
 * transports and for every call that authenticates (a scan sends no key and needs none). A key the server refuses fails as `auth`, and the message lists
 * what was offered (the key files, the agent), what was skipped and why, and the methods the server accepts; the
 * server is a real OpenSSH (the sshd fixture).
 */
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SshConnectOptions } from "../src/index.js";
import { acceptHostKey, connectSsh, deployAgent, scanHostKey } from "../src/index.js";
import { isolateHome, type Sshd, startSshd } from "./fixtures/sshd.js";

let home: string;
let sshd: Sshd;
let listener: Server;
let accepted = 0;
let listenerPort: number;

beforeAll(async () => {
  home = await isolateHome();
  sshd = await startSshd();
  listener = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
  const address = listener.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  listenerPort = address.port;
});

afterAll(async () => {
  await new Promise((done) => listener?.close(done));
  await sshd?.stop();
  await rm(home, { recursive: true, force: true });
});

describe("a key file named in identityFiles that cannot be read", () => {
  it("fails as config, naming the file, before any connection, for every call that logs in, on both transports", async () => {
    const missing = join(home, "no-such-key");
    const options: SshConnectOptions = {
      configFile: false,
      agent: false,
      knownHostsFile: join(home, "known_hosts"),
      trustedKnownHostsFiles: [],
      identityFiles: [sshd.clientKey, missing],
      connectTimeout: 10,
    };
    const target = `me@127.0.0.1:${listenerPort}`;
    for (const [what, result] of [
      ["connectSsh", await connectSsh(target, options)],
      ["connectSsh over openssh", await connectSsh(target, { ...options, transport: "openssh" })],
      ["deployAgent", await deployAgent(target, options)],
    ] as const) {
      expect(result.ok ? "ok" : result.error.code, what).toBe("config");
      if (!result.ok) expect(result.error.message, what).toContain(`identity file ${missing}:`);
    }
    expect(accepted).toBe(0);
    // A scan sends no credentials, so it does not need them.
    const scanned = await scanHostKey(target, options);
    expect(scanned.ok ? "ok" : scanned.error.code).toBe("connect");
    expect(accepted).toBe(1);

    // A directory is no key file either; a `~/` path is named expanded.
    const directory = await connectSsh(target, { ...options, identityFiles: ["~"] });
    expect(directory.ok ? "ok" : directory.error.message).toContain(`identity file ${home}:`);
    expect(accepted).toBe(1);
  });
});

describe("an authentication the server refuses", () => {
  it("fails as auth, listing the keys offered, the ones skipped and why, and what the server accepts", async () => {
    const wrongKey = join(sshd.dir, "wrong_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "not-authorized", "-f", wrongKey]);
    const locked = join(sshd.dir, "locked_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "secret", "-f", locked]);
    const trusted = await acceptHostKey(sshd.target, sshd.fingerprint, sshd.options);
    expect(trusted.ok).toBe(true);

    const refused = await connectSsh(sshd.target, { ...sshd.options, identityFiles: [wrongKey, locked] });
    expect(refused.ok ? "ok" : refused.error.code).toBe("auth");
    if (refused.ok) return;
    expect(refused.error.message).toBe(
      `Authentication to ${sshd.target} failed: offered key ${wrongKey}; ` +
        `not offered: key ${locked} (encrypted, and no passphrase callback); the server accepts publickey`,
    );

    // With the fixture's own key the same options log in: the failure above was the key's.
    const admitted = await connectSsh(sshd.target, { ...sshd.options, identityFiles: [wrongKey, sshd.clientKey] });
    expect(admitted.ok ? "ok" : admitted.error.message).toBe("ok");
    if (admitted.ok) await admitted.value.close();
  });
});
