// LocalExecutionEnv and the packaged-agent lookup.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostPlatform, packagedAgent, readManifest } from "../src/agent-binary.js";
import { LocalExecutionEnv } from "../src/local-env.js";
import { isAlive } from "./fixtures/connections.js";

const SDK_ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPO_ROOT = dirname(SDK_ROOT);
const IDLE = fileURLToPath(new URL("./fixtures/local-idle.ts", import.meta.url));
const hostBinary = join(SDK_ROOT, "bin", `${hostPlatform()}-${process.arch}`, "outpost");
const agentPath = process.env.OUTPOST_AGENT || hostBinary;
const context = { abortSignal: undefined };

describe("packagedAgent", () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.OUTPOST_AGENT;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.OUTPOST_AGENT;
    else process.env.OUTPOST_AGENT = saved;
  });

  it("names this machine's platform the SDK's way", () => {
    expect(["linux", "darwin", "windows", "android", "freebsd"]).toContain(hostPlatform());
  });

  it("finds the packaged agent for this machine", () => {
    delete process.env.OUTPOST_AGENT;
    expect(packagedAgent()).toBe(hostBinary);
  });

  it("honours OUTPOST_AGENT for this machine only, as an absolute path", () => {
    process.env.OUTPOST_AGENT = "sdk/test/fixtures/fake-agent.mjs";
    const cwd = process.cwd();
    try {
      process.chdir(REPO_ROOT);
      expect(packagedAgent()).toBe(join(REPO_ROOT, "sdk/test/fixtures/fake-agent.mjs"));
    } finally {
      process.chdir(cwd);
    }
    expect(() => packagedAgent("plan9", "mips")).toThrow(
      `No Outpost agent for plan9-mips at ${join(SDK_ROOT, "bin", "plan9-mips", "outpost")}: this @outpost/sdk package does not carry the plan9-mips agent`,
    );
  });

  it("reports a missing agent clearly, with .exe on Windows", () => {
    delete process.env.OUTPOST_AGENT;
    expect(() => packagedAgent("windows", "riscv")).toThrow(
      `No Outpost agent for windows-riscv at ${join(SDK_ROOT, "bin", "windows-riscv", "outpost.exe")}: this @outpost/sdk package does not carry the windows-riscv agent`,
    );
    process.env.OUTPOST_AGENT = "/nonexistent/outpost";
    expect(() => packagedAgent()).toThrow(
      `No Outpost agent for ${hostPlatform()}-${process.arch} at /nonexistent/outpost (set by OUTPOST_AGENT)`,
    );
  });
});

describe("readManifest", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "outpost-manifest-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("returns undefined when there is no manifest", () => {
    expect(readManifest(dir)).toBeUndefined();
  });

  it("reads a manifest written by make dist", async () => {
    const manifest = {
      version: "0.1.0",
      agents: { "linux-x64": { path: "linux-x64/outpost", sha256: "ab".repeat(32), size: 123 } },
    };
    await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
    expect(readManifest(dir)).toEqual(manifest);
  });

  it.each(["{", "[]", '{"version":1,"agents":{}}', '{"version":"1","agents":{"x":{"path":"p"}}}'])(
    "rejects the invalid manifest %s",
    async (text) => {
      await writeFile(join(dir, "manifest.json"), text);
      expect(() => readManifest(dir)).toThrow(/^Invalid agent manifest at /);
    },
  );
});

describe("LocalExecutionEnv", () => {
  it("is the node:local namespace with the process cwd by default", () => {
    const env = new LocalExecutionEnv({ agentPath: "/unused/outpost" });
    expect(env.id).toBe("node:local");
    expect(env.cwd).toBe(process.cwd());
    expect(new LocalExecutionEnv({ agentPath: "/unused/outpost", cwd: "rel" }).cwd).toBe("rel");
  });

  it("fails its operations with a lost spawn error when the agent cannot start", async () => {
    const env = new LocalExecutionEnv({ agentPath: "/nonexistent/outpost", cwd: "/" });
    const result = await env.exec("true", undefined, context);
    expect(result.ok).toBe(false);
    // A lost connection is no statement about the command: exec reports it as unknown, not spawn_error.
    expect(result.ok ? undefined : result.error).toMatchObject({
      code: "unknown",
      message: expect.stringContaining("ENOENT"),
    });
    await env.close();
  });

  it("starts the agent lazily and stops it on close()", async () => {
    const env = new LocalExecutionEnv({ agentPath, cwd: "/srv" });
    expect(await env.absolutePath("a/../b", context)).toEqual({ ok: true, value: "/srv/b" });
    await env.close();
    const after = await env.absolutePath("x", context);
    expect(after.ok).toBe(false);
  });

  it("gives commands this process's environment as it is at each call, like Node", async () => {
    const env = new LocalExecutionEnv({ agentPath, cwd: tmpdir(), shellEnv: { OUTPOST_SHELL_ENV: "shell" } });
    const print = async (): Promise<string> => {
      let out = "";
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
      const script = 'printf "%s|%s|%s" "${OUTPOST_LATE-unset}" "${OUTPOST_SHELL_ENV-unset}" "${OUTPOST_EARLY-unset}"';
      const result = await env.exec(["sh", "-c", script], { onOutput: (text) => (out += text) }, context);
      expect(result).toEqual({ ok: true, value: { exitCode: 0 } });
      return out;
    };
    process.env.OUTPOST_EARLY = "early";
    try {
      expect(await print()).toBe("unset|shell|early"); // the agent starts here, with OUTPOST_EARLY in its env
      process.env.OUTPOST_LATE = "late";
      delete process.env.OUTPOST_EARLY;
      expect(await print()).toBe("late|shell|unset");
    } finally {
      delete process.env.OUTPOST_LATE;
      delete process.env.OUTPOST_EARLY;
      await env.close();
    }
  });

  it("never keeps the host process alive while idle", async () => {
    const started = Date.now();
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", IDLE, agentPath], {
      cwd: REPO_ROOT,
      timeout: 20_000,
    });
    expect(stderr).toBe("");
    const { resolved, pid } = JSON.parse(stdout);
    expect(resolved).toEqual({ ok: true, value: "/idle-check" });
    expect(Date.now() - started).toBeLessThan(15_000);
    // The agent sees stdin end when its host exits, and exits too.
    await expect.poll(() => isAlive(pid), { timeout: 5000 }).toBe(false);
  });
});
