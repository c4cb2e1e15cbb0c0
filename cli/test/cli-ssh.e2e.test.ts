/**
 * The `outpost` command against a real OpenSSH server on 127.0.0.1 (the sshd fixture): host-key scan, accept and
 * forget; deploy with its progress rendered to a non-TTY as plain lines; sh and doctor over SSH. The CLI runs with
 * its own temp HOME, no ssh-agent, and flags naming the fixture's files, so no real ~/.ssh is read.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Sshd, startSshd } from "../../sdk/test/fixtures/sshd.js";
import { pipeIntoHead, run } from "./run-cli.js";

let sshd: Sshd;
let home: string;
let flags: string[];
let env: Record<string, string | undefined>;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "outpost-cli-home-"));
  sshd = await startSshd();
  const options = sshd.options;
  flags = [
    "-F",
    String(options.configFile),
    "-i",
    sshd.clientKey,
    "--known-hosts",
    join(home, "known_hosts"),
    "--connect-timeout",
    "15",
  ];
  env = { HOME: home, SSH_AUTH_SOCK: undefined };
});

afterAll(async () => {
  await sshd?.stop();
  await rm(home, { recursive: true, force: true });
});

const outpost = (...args: string[]) => run([...flags, ...args], env);

describe("outpost over SSH", () => {
  it("hosts scan shows the fingerprint; accept needs it (or a terminal) and must match; forget removes trust", async () => {
    const scanned = await outpost("hosts", "scan", sshd.target);
    expect(scanned.code).toBe(0);
    expect(scanned.stdout).toBe(`[127.0.0.1]:${sshd.port} ssh-ed25519 ${sshd.fingerprint}\n`);

    const untrusted = await outpost("sh", sshd.target, "true");
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/^outpost: .*`outpost hosts scan .*\[host_key_unknown\]\n$/);

    const noTerminal = await outpost("hosts", "accept", sshd.target);
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toContain("--fingerprint");

    const wrong = await outpost("hosts", "accept", sshd.target, "--fingerprint", `SHA256:${"A".repeat(43)}`);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^outpost: hosts accept .*\[fingerprint_mismatch\]\n$/);

    const accepted = await outpost("hosts", "accept", sshd.target, "--fingerprint", sshd.fingerprint);
    expect(accepted).toMatchObject({ code: 0, stdout: `trusted: [127.0.0.1]:${sshd.port} ${sshd.fingerprint}\n` });
    const again = await outpost("hosts", "accept", sshd.target, "--fingerprint", sshd.fingerprint);
    expect(again.stdout).toMatch(/^already trusted: /);

    const shell = await outpost("sh", sshd.target, "echo over ssh; exit 5");
    expect(shell).toMatchObject({ code: 5, stdout: "over ssh\n" });

    expect((await outpost("hosts", "forget", sshd.target)).code).toBe(0);
    expect((await outpost("sh", sshd.target, "true")).code).toBe(1);
    expect((await outpost("hosts", "accept", sshd.target, "--fingerprint", sshd.fingerprint)).code).toBe(0);
  });

  it("deploy renders progress to a non-TTY as plain lines, then finds the agent verified", async () => {
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const first = await outpost("deploy", sshd.target);
    expect(first.code).toBe(0);
    expect(first.stdout).not.toContain("\x1b");
    const lines = first.stdout.split("\n").filter((line) => line !== "");
    const progress = lines.filter((line) => line.startsWith("deploy "));
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const line of progress) expect(line).toMatch(/^deploy \d+% \d+\.\d MiB \/ \d+\.\d MiB \d+\.\d MiB\/s$/);
    expect(progress[0]).toMatch(/^deploy 0% 0\.0 MiB/);
    expect(progress[progress.length - 1]).toMatch(/^deploy 100% (\S+ MiB) \/ \1 /);
    expect(lines[lines.length - 1]).toMatch(
      /^deployed: .*\/\.outpost\/bin\/outpost-[0-9a-f]{64} \(sha256 [0-9a-f]{64}\)$/,
    );

    const second = await outpost("deploy", sshd.target);
    expect(second).toMatchObject({ code: 0 });
    expect(second.stdout).toMatch(/^already deployed: /);
  });

  it("doctor runs the deployed agent's doctor and shows host key, platform and round-trip time", async () => {
    const result = await outpost("doctor", sshd.target, "--json");
    const report = JSON.parse(result.stdout);
    expect(result.code).toBe(report.ok ? 0 : 1);
    expect(report).toMatchObject({
      target: sshd.target,
      platform: `linux-${process.arch}`,
      hostKey: `ssh-ed25519 ${sshd.fingerprint}`,
    });
    expect(report.agent).toMatch(/\/\.outpost\/bin\/outpost-[0-9a-f]{64}$/);
    expect(report.roundTripMs).toBeGreaterThan(0);
    expect(report.checks.map((check: { name: string }) => check.name)).toContain("tmpdir");
  });

  it("grep searches the target's tree, relative to the remote home; its failures, SSH's included, exit 2", async () => {
    const tree = join(sshd.home, "grep-tree");
    await mkdir(join(tree, "sub"), { recursive: true });
    await writeFile(join(tree, "a.txt"), "one\nfoo here\n");
    await writeFile(join(tree, "sub", "b.txt"), "FOO there\n");
    try {
      const found = await outpost("grep", sshd.target, "-i", "foo", "grep-tree");
      expect(found).toMatchObject({ code: 0, stdout: "grep-tree/a.txt:2:foo here\ngrep-tree/sub/b.txt:1:FOO there\n" });
      expect(await outpost("grep", sshd.target, "nothing-like-this", "grep-tree")).toMatchObject({
        code: 1,
        stdout: "",
      });
      const nobody = `me@127.0.0.1:${await freePort()}`;
      const closed = await outpost("grep", nobody, "foo");
      expect(closed.code).toBe(2);
      expect(closed.stderr).toMatch(new RegExp(`^outpost: ${nobody}: .*\\[connect\\]\\n$`));
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it("every SSH failure line names its code: a missing -i key, a refused key, no server", async () => {
    const missing = join(home, "no-such-key");
    const noKey = await outpost("-i", missing, "sh", sshd.target, "true");
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(
      new RegExp(`^outpost: ${sshd.target}: Cannot read the identity file ${missing}: .*\\[config\\]\\n$`),
    );

    const wrongKey = join(home, "wrong_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", wrongKey]);
    const trust = ["--known-hosts", join(home, "known_hosts"), "-F", String(sshd.options.configFile)];
    const refused = await run([...trust, "-i", wrongKey, "sh", sshd.target, "true"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `outpost: ${sshd.target}: Authentication to ${sshd.target} failed: offered key ${wrongKey}; ` +
        "the server accepts publickey [auth]\n",
    );

    const nobody = `me@127.0.0.1:${await freePort()}`;
    const closed = await outpost("sh", nobody, "true");
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(new RegExp(`^outpost: ${nobody}: .*\\[connect\\]\\n$`));
  });

  it("a changed host key names `outpost hosts forget <target>`, and following it works", async () => {
    const other = await startSshd();
    try {
      expect((await outpost("hosts", "accept", other.target, "--fingerprint", other.fingerprint)).code).toBe(0);
      await other.rotateHostKey();
      const changed = await outpost("sh", other.target, "true");
      expect(changed.code).toBe(1);
      expect(changed.stderr).toContain(`run \`outpost hosts forget ${other.target}\``);
      expect(changed.stderr).toContain(`--fingerprint ${other.fingerprint}\``);
      expect(changed.stderr).not.toContain("forgetHostKey");
      expect(changed.stderr).toMatch(/^outpost: .*\[host_key_changed\]\n$/);

      expect((await outpost("hosts", "forget", other.target)).code).toBe(0);
      expect((await outpost("hosts", "accept", other.target, "--fingerprint", other.fingerprint)).code).toBe(0);
      // This server authorizes its own client key.
      expect(await outpost("-i", other.clientKey, "sh", other.target, "echo trusted again")).toMatchObject({
        code: 0,
        stdout: "trusted again\n",
        stderr: "",
      });
    } finally {
      await other.stop();
    }
  });

  it("sh piped into head ends quietly with its reader and stops the command on the target", async () => {
    expect((await outpost("hosts", "accept", sshd.target, "--fingerprint", sshd.fingerprint)).code).toBe(0);
    const pidFile = join(home, "writer.pid");
    const { head, cli } = await pipeIntoHead(
      [...flags, "sh", sshd.target, `echo $$ > ${pidFile}; exec yes`],
      ["-n", "1"],
      env,
    );
    expect(head).toBe("y\n");
    expect({ code: cli.code, signal: cli.signal, stderr: cli.stderr }).toEqual({
      code: null,
      signal: "SIGPIPE",
      stderr: "",
    });
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(Number.isSafeInteger(pid) && pid > 0).toBe(true);
    expect(running(pid), `pid ${pid} still running`).toBe(false);
  });

  it("deploy piped into head finishes the upload, then ends quietly by SIGPIPE", async () => {
    expect((await outpost("hosts", "accept", sshd.target, "--fingerprint", sshd.fingerprint)).code).toBe(0);
    await rm(join(sshd.home, ".outpost"), { recursive: true, force: true });
    const { head, cli } = await pipeIntoHead([...flags, "deploy", sshd.target], ["-n", "1"], env);
    expect(head).toMatch(/^deploy 0% 0\.0 MiB/);
    expect({ code: cli.code, signal: cli.signal, stderr: cli.stderr }).toEqual({
      code: null,
      signal: "SIGPIPE",
      stderr: "",
    });
    // A half-uploaded agent would be uploaded again; this one is complete and verified.
    expect((await outpost("deploy", sshd.target)).stdout).toMatch(/^already deployed: /);
  });
});

/** Whether `pid` is running (a zombie, killed and waiting to be reaped, is not). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0] !== "Z";
  } catch {
    return false;
  }
}
