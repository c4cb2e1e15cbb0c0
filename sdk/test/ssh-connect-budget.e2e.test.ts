/**
 * How much a connect costs, counted at the server (spec/semantics.md SSH7): the loopback sshd logs at DEBUG1 every
 * authenticated connection and every exec request, and the test asserts the budget — a warm connect (agent there)
 * is one connection and one remote command, as `ssh host true` is; a cold one adds one command that uploads and
 * starts the agent (this host's GNU `head -c` reads exactly; ssh-boot.test.ts checks the other path); SFTP is never opened for a POSIX target; every env on the same target and options shares one
 * connection (as many as the server's `MaxSessions` allows per connection). What each step costs in time over a
 * real link is for the WAN rig (issue 27); here the counts are the point.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOrThrow } from "../src/contract/result.js";
import {
  acceptHostKey,
  connectSsh,
  type SshEnvOptions,
  type SshExecutionEnv,
  sharedConnections,
} from "../src/ssh/connect.js";
import { output } from "./fixtures/env-output.js";
import { isolateHome, type Sshd, startSshd } from "./fixtures/sshd.js";

let sshd: Sshd;
let clientHome: string;
let options: SshEnvOptions;

beforeAll(async () => {
  clientHome = await isolateHome();
  sshd = await startSshd({ logLevel: "DEBUG1" });
  options = { ...sshd.options };
  getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, options));
});

afterAll(async () => {
  await sshd?.stop();
  if (clientHome !== undefined) await rm(clientHome, { recursive: true, force: true });
});

/** What the server saw since `from` (a log offset): authenticated connections, exec requests, SFTP sessions. */
function counts(from: number) {
  const log = sshd.log().slice(from);
  const count = (pattern: RegExp) => log.split("\n").filter((line) => pattern.test(line)).length;
  return {
    connections: count(/Accepted publickey for /),
    execs: count(/server_input_channel_req: channel \d+ request exec/),
    subsystems: count(/server_input_channel_req: channel \d+ request subsystem/),
  };
}

/** Runs `work` and returns what the server counted meanwhile (the log settles once the sessions are logged). */
async function counted<T>(work: () => Promise<T>): Promise<{ value: T; seen: ReturnType<typeof counts> }> {
  const from = sshd.log().length;
  const value = await work();
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { value, seen: counts(from) };
}

describe("connect budget, counted at the server", () => {
  it("cold: one connection, two commands (start: missing; upload and start), no SFTP; warm: one and one", async () => {
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const cold = await counted(async () => getOrThrow(await connectSsh(sshd.target, options)));
    expect(cold.value.connection.deployed()?.uploaded).toBe(true);
    expect(cold.seen).toEqual({ connections: 1, execs: 2, subsystems: 0 });
    expect(await output(cold.value, "echo cold")).toBe("cold\n");
    await cold.value.close();

    const warm = await counted(async () => getOrThrow(await connectSsh(sshd.target, options)));
    expect(warm.value.connection.deployed()?.uploaded).toBe(false);
    expect(warm.seen).toEqual({ connections: 1, execs: 1, subsystems: 0 });
    expect(await output(warm.value, "echo warm")).toBe("warm\n");
    await warm.value.close();
  });

  it("the same as `ssh host true`: one connection, one command", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const args = ["-F", options.configFile as string, "-i", sshd.clientKey, "-o", "IdentitiesOnly=yes"];
    args.push("-o", `UserKnownHostsFile=${options.knownHostsFile}`, "-o", "StrictHostKeyChecking=yes");
    args.push("-p", String(sshd.port), sshd.target.split(":")[0], "true");
    const anchor = await counted(() => promisify(execFile)("ssh", args));
    expect(anchor.seen).toEqual({ connections: 1, execs: 1, subsystems: 0 });
  });

  it("a second env on the same target and options shares the first one's connection", async () => {
    const first = getOrThrow(await connectSsh(sshd.target, options));
    const second = await counted(async () => getOrThrow(await connectSsh(sshd.target, options)));
    expect(second.seen).toEqual({ connections: 0, execs: 1, subsystems: 0 });
    expect(await sharedConnections(sshd.target, options)).toBe(1);
    expect(await output(second.value, "echo second")).toBe("second\n");
    await first.close();
    // The connection outlives the first env while the second uses it.
    expect(await output(second.value, "echo still")).toBe("still\n");
    await second.value.close();
    expect(await sharedConnections(sshd.target, options)).toBe(0);
    // Other options (here another known-hosts file) never share.
    const other = { ...options, knownHostsFile: join(sshd.dir, "known_hosts-other") };
    getOrThrow(await acceptHostKey(sshd.target, sshd.fingerprint, other));
    const a = getOrThrow(await connectSsh(sshd.target, options));
    const b = getOrThrow(await connectSsh(sshd.target, other));
    expect(await sharedConnections(sshd.target, options)).toBe(1);
    expect(await sharedConnections(sshd.target, other)).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  for (const envs of [1, 10, 50]) {
    it(`${envs} envs at once: ⌈${envs}/10⌉ connections (sshd's MaxSessions 10), one command each, all working`, async () => {
      // The agent deployed already (whichever test runs first).
      await getOrThrow(await connectSsh(sshd.target, options)).close();
      const { value, seen } = await counted(() =>
        Promise.all(Array.from({ length: envs }, async () => getOrThrow(await connectSsh(sshd.target, options)))),
      );
      const opened: SshExecutionEnv[] = value;
      try {
        expect(seen.execs).toBe(envs);
        expect(seen.connections).toBe(Math.ceil(envs / 10));
        expect(await sharedConnections(sshd.target, options)).toBe(Math.ceil(envs / 10));
        const echoed = await Promise.all(opened.map((env, index) => output(env, `echo ${index}`)));
        expect(echoed).toEqual(opened.map((_, index) => `${index}\n`));
      } finally {
        await Promise.all(opened.map((env) => env.close()));
      }
      expect(await sharedConnections(sshd.target, options)).toBe(0);
    }, 120_000);
  }
});
