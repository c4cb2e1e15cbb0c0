/**
 * The boot command (boot.ts) run for real by a local `sh` standing in for the account's login shell, which prints
 * on both streams first (a line, and text without a newline): the agent is started only when its file verifies,
 * with its arguments, its stdin and stdout passed through untouched after the report, and the startup noise kept in
 * front for the sync search; a missing or tampered file is reported, not run; a shell that is not POSIX answers
 * nothing; text that only looks like the marker is skipped. ssh-connect-budget.e2e.test.ts and
 * ssh-shells.e2e.test.ts boot over real servers.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { LocalAgent } from "../src/env/agent-deploy.js";
import { bootLine, readBoot, uploadBootLine } from "../src/ssh/boot.js";
import { SCRIPT_COMMAND } from "../src/ssh/remote-script.js";
import type { AgentProcess } from "../src/wire/connection.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-boot-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const evidence = join(dir, "ran");
const agentText = `#!/bin/sh\ntouch '${evidence}'\necho "agent $*"\ncat\n`;
const agentSha = createHash("sha256").update(agentText).digest("hex");
const NOISE = "echo 'hello from rc'; echo 'OUTPOST-BOOT-0000'; printf 'no newline'; echo 'rc noise' >&2";

/** A fresh home; `agent` puts a file under the agent's name. */
function home(agent?: string): string {
  const root = mkdtempSync(join(dir, "home-"));
  if (agent !== undefined) {
    mkdirSync(join(root, ".outpost", "bin"), { recursive: true });
    writeFileSync(join(root, ".outpost", "bin", `outpost-${agentSha}`), agent, { mode: 0o755 });
  }
  return root;
}

/** SCRIPT_COMMAND through a "login shell" that prints first, as sshd runs it; `path` goes first on its PATH. */
function loginShell(homeDir: string, startup = NOISE, path?: string) {
  const PATH = path === undefined ? process.env.PATH : `${path}:${process.env.PATH}`;
  return spawn("/bin/sh", ["-c", `${startup}; eval "$1"`, "login-shell", SCRIPT_COMMAND], {
    env: { ...process.env, HOME: homeDir, PATH },
    stdio: "pipe",
  });
}

/** A directory whose `head` is BusyBox's, as far as `head --version` tells (it reads ahead through stdio). */
function busyboxHead(): string {
  const tools = mkdtempSync(join(dir, "busybox-"));
  writeFileSync(join(tools, "head"), '#!/bin/sh\necho "BusyBox v1.36.1 multi-call binary." >&2; exit 1\n', {
    mode: 0o755,
  });
  return tools;
}

const agentFile = join(dir, "agent.sh");
writeFileSync(agentFile, agentText, { mode: 0o755 });
const localAgent: LocalAgent = { path: agentFile, sha256: agentSha, size: Buffer.byteLength(agentText) };

/** The upload-and-start command for `agent` into `homeDir`. */
function uploadBoot(homeDir: string, agent = localAgent) {
  const { line, marker } = uploadBootLine(agent, join(homeDir, ".outpost", "bin", `outpost-${agentSha}`), ["serve"]);
  let progress = 0;
  const child = loginShell(homeDir);
  const outcome = readBoot(child, line, marker, {
    path: agent.path,
    size: agent.size,
    onProgress: (sent) => {
      progress = sent;
    },
  });
  return { outcome, progress: () => progress };
}

/** Everything an agent started by a boot prints until it ends. */
async function agentOutput(agent: AgentProcess): Promise<string> {
  let text = "";
  agent.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  await new Promise((resolve) => agent.on("close", resolve));
  return text;
}

function boot(homeDir: string, table = [`any=${agentSha}`], startup?: string) {
  const { line, marker } = bootLine(table, ["serve", "--token", "it's $HOME"]);
  return readBoot(loginShell(homeDir, startup), line, marker);
}

describe("readBoot", () => {
  it("starts a verified agent with its arguments; stdio passes through after the report, noise in front", async () => {
    const root = home(agentText);
    const outcome = await boot(root);
    if (outcome.kind !== "start") throw new Error(`expected start, got ${outcome.kind}`);
    expect(outcome.sha256).toBe(agentSha);
    expect(outcome.probe).toMatchObject({ system: "Linux", home: root });
    let text = "";
    outcome.agent.stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    const closed = new Promise((resolve) => outcome.agent.on("close", resolve));
    outcome.agent.stdin.end("ping\n");
    await closed;
    expect(text).toBe("hello from rc\nOUTPOST-BOOT-0000\nno newline\nagent serve --token it's $HOME\nping\n");
  });

  it("picks the agent of the target's platform from the table, and none when the table has no entry for it", async () => {
    const root = home(agentText);
    const arch = process.arch === "arm64" ? "arm64" : "x64";
    const picked = await boot(root, [`darwin-${arch}=${"0".repeat(64)}`, `linux-${arch}=${agentSha}`]);
    expect(picked.kind).toBe("start");
    if (picked.kind === "start") picked.agent.stdin.end();
    const none = await boot(root, [`darwin-${arch}=${agentSha}`]);
    expect(none).toMatchObject({ kind: "need", hash: "none" });
  });

  it("reports a missing or tampered agent, never running it", async () => {
    rmSync(evidence, { force: true });
    expect(await boot(home())).toMatchObject({ kind: "need", hash: "missing", probe: { system: "Linux" } });
    const tampered = await boot(home(`${agentText}# changed\n`));
    expect(tampered.kind).toBe("need");
    if (tampered.kind === "need") expect(tampered.hash).toMatch(/^[0-9a-f]{64}/);
    expect(existsSync(evidence)).toBe(false);
  });

  it("answers none when no POSIX shell runs the script", async () => {
    const outcome = await boot(home(agentText), undefined, "echo 'not a shell that runs sh'; exit 0");
    expect(outcome).toMatchObject({ kind: "none", output: "not a shell that runs sh" });
  });
});

describe("the upload and the start on one channel", () => {
  it("a missing agent's report says whether the remote's head -c reads exactly: GNU's does, BusyBox's does not", async () => {
    expect(await boot(home())).toMatchObject({ kind: "need", hash: "missing", exactRead: true });
    const { line, marker } = bootLine([`any=${agentSha}`], []);
    const outcome = await readBoot(loginShell(home(), NOISE, busyboxHead()), line, marker);
    expect(outcome).toMatchObject({ kind: "need", hash: "missing", exactRead: false });
  });

  it("writes the binary 0755 in a 0700 directory, verifies it and starts it; the bytes after it are the agent's", async () => {
    rmSync(evidence, { force: true });
    const root = home();
    // The agent's first input in the same write as the binary's last bytes: a head that read ahead would swallow it.
    const sent = join(dir, "binary-and-more");
    writeFileSync(sent, `${agentText}ping\n`);
    const run = uploadBoot(root, { ...localAgent, path: sent });
    const outcome = await run.outcome;
    if (outcome.kind !== "start") throw new Error(`expected start, got ${JSON.stringify(outcome)}`);
    expect(outcome).toMatchObject({ sha256: agentSha, probe: { system: "Linux", home: root } });
    outcome.agent.stdin.end("pong\n");
    expect(await agentOutput(outcome.agent)).toBe(
      "hello from rc\nOUTPOST-BOOT-0000\nno newline\nagent serve\nping\npong\n",
    );
    const bin = join(root, ".outpost", "bin");
    expect(readdirSync(bin)).toEqual([`outpost-${agentSha}`]);
    expect(statSync(bin).mode & 0o777).toBe(0o700);
    expect(statSync(join(bin, `outpost-${agentSha}`)).mode & 0o777).toBe(0o755);
    expect(existsSync(evidence)).toBe(true);
    expect(run.progress()).toBe(Buffer.byteLength(`${agentText}ping\n`));
  });

  it("never starts an upload that does not verify, and leaves no temporary file", async () => {
    rmSync(evidence, { force: true });
    const root = home();
    const outcome = await uploadBoot(root, { ...localAgent, sha256: "0".repeat(64) }).outcome;
    expect(outcome).toMatchObject({ kind: "need", hash: `corrupt upload ${agentSha}  -`, exactRead: false });
    expect(readdirSync(join(root, ".outpost", "bin"))).toEqual([]);
    expect(existsSync(evidence)).toBe(false);
  });

  it("says the write failed, with the remote's words, when the directory cannot be made", async () => {
    const root = home();
    writeFileSync(join(root, ".outpost"), "a file where the directory goes");
    const outcome = await uploadBoot(root).outcome;
    expect(outcome).toMatchObject({ kind: "need", hash: "write failed" });
    if (outcome.kind === "need") expect(outcome.stderr).toMatch(/\.outpost/);
  });
});
