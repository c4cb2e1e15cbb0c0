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
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bootLine, readBoot } from "../src/ssh/boot.js";
import { SCRIPT_COMMAND } from "../src/ssh/remote-script.js";

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

/** SCRIPT_COMMAND through a "login shell" that prints first, as sshd runs it. */
function loginShell(homeDir: string, startup = NOISE) {
  return spawn("/bin/sh", ["-c", `${startup}; eval "$1"`, "login-shell", SCRIPT_COMMAND], {
    env: { ...process.env, HOME: homeDir },
    stdio: "pipe",
  });
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
