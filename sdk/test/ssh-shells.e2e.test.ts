/**
 * connectSsh against accounts as people have them: login shells bash, zsh, fish and tcsh whose startup files print
 * on stdout (a line, and text without a newline) and on stderr, served by two SSH servers — OpenSSH's sshd with
 * Debian's stock SFTP server (which it starts through the account's shell, so the noise reaches it) and Dropbear —
 * over both transports: connect (deploy), tamper-and-replace, and reconnect after the agent was replaced under a
 * live env. Needs root (accounts), zsh, fish, tcsh and dropbear-bin.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOrThrow } from "../src/contract/result.js";
import { packagedAgent } from "../src/env/agent-binary.js";
import { acceptHostKey, connectSsh, type SshEnvOptions, sharedConnections } from "../src/ssh/connect.js";
import { type Dropbear, startDropbear } from "./fixtures/dropbear.js";
import { output, sha256Of } from "./fixtures/env-output.js";
import { createUser, isolateHome, type Sshd, startSshd } from "./fixtures/sshd.js";

const run = promisify(execFile);
const none = { abortSignal: undefined };
const agentSha = await sha256Of(packagedAgent());
const isRoot = process.getuid?.() === 0;

/** A login shell and the startup file it reads for `ssh host command`, printing on both streams. */
interface Shell {
  name: string;
  path: string;
  rcFile: string;
  rc: (word: string) => string;
}

const SHELLS: Shell[] = [
  {
    name: "bash",
    path: "/bin/bash",
    rcFile: ".bashrc",
    rc: (word) => `echo 'hello ${word}'\nprintf 'no newline ${word}'\necho 'noise ${word}' >&2\n`,
  },
  {
    name: "zsh",
    path: "/bin/zsh",
    rcFile: ".zshenv",
    rc: (word) => `echo 'hello ${word}'\nprintf 'no newline ${word}'\necho 'noise ${word}' >&2\n`,
  },
  {
    name: "fish",
    path: "/usr/bin/fish",
    rcFile: ".config/fish/config.fish",
    rc: (word) => `echo 'hello ${word}'\nprintf 'no newline ${word}'\necho 'noise ${word}' >&2\n`,
  },
  {
    name: "tcsh",
    path: "/usr/bin/tcsh",
    rcFile: ".tcshrc",
    rc: (word) => `echo 'hello ${word}'\nprintf 'no newline ${word}'\nsh -c "echo 'noise ${word}' >&2"\n`,
  },
];

interface Account {
  shell: Shell;
  user: string;
  home: string;
}

let scratch: string;
let clientHome: string;
let sshd: Sshd;
let dropbear: Dropbear;
const accounts: Account[] = [];
const removals: (() => Promise<void>)[] = [];
let counter = 0;

beforeAll(async () => {
  if (!isRoot) return;
  for (const shell of SHELLS) {
    if (!existsSync(shell.path)) throw new Error(`${shell.path} is missing: apt-get install ${shell.name}`);
  }
  clientHome = await isolateHome();
  scratch = await mkdtemp(join(tmpdir(), "outpost-ssh-shells-"));
  await chmod(scratch, 0o755);
  sshd = await startSshd({ sftpServer: "debian" });
  dropbear = await startDropbear();
  for (const shell of SHELLS) {
    const user = `outpost-${shell.name}-${process.pid % 10000}`;
    const home = join(scratch, user);
    removals.push(await createUser(user, home, shell.path));
    const rcPath = join(home, shell.rcFile);
    await mkdir(join(rcPath, ".."), { recursive: true });
    await writeFile(rcPath, shell.rc(`from ${shell.rcFile}`));
    await dropbear.authorize(user, home);
    await run("chown", ["-R", `${user}:`, home]);
    accounts.push({ shell, user, home });
  }
}, 60_000);

afterAll(async () => {
  await sshd?.stop();
  await dropbear?.stop();
  for (const remove of removals) await remove();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  if (clientHome !== undefined) await rm(clientHome, { recursive: true, force: true });
});

interface Server {
  name: string;
  port: () => number;
  fingerprint: () => string;
  options: () => SshEnvOptions;
  sessions: () => Promise<number[]>;
}

const SERVERS: Server[] = [
  {
    name: "OpenSSH sshd with Debian's sftp-server",
    port: () => sshd.port,
    fingerprint: () => sshd.fingerprint,
    options: () => sshd.options,
    sessions: () => sshd.sessions(),
  },
  {
    name: "Dropbear",
    port: () => dropbear.port,
    fingerprint: () => dropbear.fingerprint,
    options: () => dropbear.options,
    sessions: () => dropbear.sessions(),
  },
];

/** Replaces the agent as an attacker would: a new file under the name, which leaves evidence if it ever runs. */
async function tamper(account: Account, evidence: string): Promise<void> {
  const path = join(account.home, ".outpost", "bin", `outpost-${agentSha}`);
  await rm(path, { force: true });
  await writeFile(path, `#!/bin/sh\ntouch '${evidence}'\n`, { mode: 0o755 });
  await run("chown", [`${account.user}:`, path]);
}

describe.runIf(isRoot)("accounts whose login shell prints at start", () => {
  for (const server of SERVERS) {
    for (const transport of ["ssh2", "openssh"] as const) {
      for (const shellName of SHELLS.map((shell) => shell.name)) {
        it(`${shellName} on ${server.name} over ${transport}: connect (deploy), tamper-and-replace, reconnect`, async () => {
          const account = accounts.find((candidate) => candidate.shell.name === shellName)!;
          const target = `${account.user}@127.0.0.1:${server.port()}`;
          counter += 1;
          const base = { ...server.options(), knownHostsFile: join(scratch, `known_hosts-${counter}`), transport };
          getOrThrow(await acceptHostKey(target, server.fingerprint(), base));
          const logs: string[] = [];
          const options: SshEnvOptions = { ...base, onLog: (text) => logs.push(text) };
          const agentPath = join(account.home, ".outpost", "bin", `outpost-${agentSha}`);
          const evidence = join(scratch, `tampered-ran-${counter}`);

          // Connect with nothing deployed.
          await rm(join(account.home, ".outpost"), { recursive: true, force: true });
          const first = getOrThrow(await connectSsh(target, options));
          expect(first.connection.deployed()).toEqual({ path: agentPath, sha256: agentSha, uploaded: true });
          expect(await sha256Of(agentPath)).toBe(agentSha);
          expect(await output(first, "echo hi; id -un")).toBe(`hi\n${account.user}\n`);
          expect(logs.join("\n")).toContain(`hello from ${account.shell.rcFile}`);
          await first.close();

          // A tampered agent is replaced before it starts.
          await tamper(account, evidence);
          const second = getOrThrow(await connectSsh(target, options));
          expect(second.connection.deployed()?.uploaded).toBe(true);
          expect(await sha256Of(agentPath)).toBe(agentSha);
          expect(await output(second, "echo second")).toBe("second\n");

          // Replaced again under the live env, and the connection lost: the next call reconnects and redeploys.
          await tamper(account, evidence);
          for (const pid of await server.sessions()) process.kill(pid, "SIGKILL");
          const lost = await second.fileInfo("/", none);
          if (!lost.ok) expect(lost.error.code).toBe("unknown");
          expect(await output(second, "echo again")).toBe("again\n");
          expect(second.connection.deployed()?.uploaded).toBe(true);
          expect(await sha256Of(agentPath)).toBe(agentSha);
          await second.close();
          expect(existsSync(evidence)).toBe(false);
          expect(await readFile(join(account.home, account.shell.rcFile), "utf8")).toContain("hello");
        }, 60_000);
      }
    }
  }
});

describe.runIf(isRoot)("Dropbear, one connection shared by many envs", () => {
  it("starts 60 envs opened and closed in turn next to one that stays open (Dropbear refuses an exec now and then)", async () => {
    const account = accounts.find((candidate) => candidate.shell.name === "bash")!;
    const target = `${account.user}@127.0.0.1:${dropbear.port}`;
    counter += 1;
    const options = { ...dropbear.options, knownHostsFile: join(scratch, `known_hosts-${counter}`) };
    getOrThrow(await acceptHostKey(target, dropbear.fingerprint, options));
    const holder = getOrThrow(await connectSsh(target, options));
    try {
      for (let index = 0; index < 60; index++) {
        const env = getOrThrow(await connectSsh(target, options));
        await env.close();
      }
      expect(await sharedConnections(target, options)).toBe(1);
      expect(await output(holder, "echo held")).toBe("held\n");
    } finally {
      await holder.close();
    }
  }, 120_000);
});
