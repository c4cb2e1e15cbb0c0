// LocalExecutionEnv and the packaged-agent lookup.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostPlatform, packagedAgent, readManifest } from "../src/env/agent-binary.js";
import { LocalExecutionEnv } from "../src/env/local-env.js";
import { isAlive } from "./fixtures/connections.js";

const SDK_ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPO_ROOT = dirname(SDK_ROOT);
const IDLE = fileURLToPath(new URL("./fixtures/local-idle.ts", import.meta.url));
const BUSY = fileURLToPath(new URL("./fixtures/local-busy.ts", import.meta.url));
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
    // Relative to the process's cwd, whatever it is (no chdir: Stryker's worker threads cannot change it).
    const fakeAgent = join(REPO_ROOT, "sdk/test/fixtures/fake-agent.mjs");
    process.env.OUTPOST_AGENT = relative(process.cwd(), fakeAgent);
    expect(packagedAgent()).toBe(fakeAgent);
    expect(packagedAgent(hostPlatform(), process.arch)).toBe(fakeAgent);
    // Another platform or architecture is never the override.
    expect(() => packagedAgent(hostPlatform(), "mips")).toThrow(`No Outpost agent for ${hostPlatform()}-mips at `);
    expect(() => packagedAgent("plan9", "mips")).toThrow(
      `No Outpost agent for plan9-mips at ${join(SDK_ROOT, "bin", "plan9-mips", "outpost")}: this @outpost/sdk package does not carry the plan9-mips agent`,
    );
  });

  it("ignores an empty OUTPOST_AGENT", () => {
    process.env.OUTPOST_AGENT = "";
    expect(packagedAgent()).toBe(hostBinary);
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

  const entry = '{"path":"p","sha256":"s","size":1}';
  it.each([
    "{",
    "[]",
    "null",
    '"manifest"',
    '{"agents":{}}',
    '{"version":1,"agents":{}}',
    '{"version":"1"}',
    '{"version":"1","agents":null}',
    '{"version":"1","agents":"x"}',
    '{"version":"1","agents":{"x":null}}',
    '{"version":"1","agents":{"x":"p"}}',
    '{"version":"1","agents":{"x":{"path":"p"}}}',
    '{"version":"1","agents":{"x":{"sha256":"s","size":1}}}',
    '{"version":"1","agents":{"x":{"path":"p","size":1}}}',
    '{"version":"1","agents":{"x":{"path":"p","sha256":"s"}}}',
    '{"version":"1","agents":{"x":{"path":1,"sha256":"s","size":1}}}',
    '{"version":"1","agents":{"x":{"path":"p","sha256":1,"size":1}}}',
    '{"version":"1","agents":{"x":{"path":"p","sha256":"s","size":"1"}}}',
    `{"version":"1","agents":{"a":${entry},"b":{"path":"p"}}}`,
    `{"version":"1","agents":{"a":{"path":"p"},"b":${entry}}}`,
  ])("rejects the invalid manifest %s", async (text) => {
    await writeFile(join(dir, "manifest.json"), text);
    expect(() => readManifest(dir)).toThrow(/^Invalid agent manifest at /);
  });

  it("reads a manifest whose every entry is complete, and no empty one", async () => {
    await writeFile(join(dir, "manifest.json"), `{"version":"1","agents":{"a":${entry},"b":${entry}}}`);
    expect(Object.keys(readManifest(dir)?.agents ?? {})).toEqual(["a", "b"]);
    await writeFile(join(dir, "manifest.json"), '{"version":"1","agents":{}}');
    expect(readManifest(dir)).toEqual({ version: "1", agents: {} });
  });

  it("throws when the manifest exists but cannot be read", async () => {
    await mkdir(join(dir, "manifest.json"));
    expect(() => readManifest(dir)).toThrow(expect.objectContaining({ code: "EISDIR" }));
  });
});

describe("LocalExecutionEnv", () => {
  it("gives commands this process's environment as it is at each call, removals included", async () => {
    const name = "OUTPOST_TEST_REMOVED_LATER";
    process.env[name] = "set";
    const env = new LocalExecutionEnv({ agentPath });
    const run = async () => {
      let output = "";
      const result = await env.exec(
        `printf %s "\${${name}-unset}"`,
        {
          onOutput: (text: string) => {
            output += text;
          },
        },
        context,
      );
      expect(result.ok).toBe(true);
      return output;
    };
    try {
      // The agent starts with the variable set, and keeps it in its own environment.
      expect(await run()).toBe("set");
      delete process.env[name];
      expect(await run()).toBe("unset");
    } finally {
      delete process.env[name];
      await env.close();
    }
  });

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

  it("keeps the host process alive while a command runs, after its first output too", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", BUSY, agentPath], {
      cwd: REPO_ROOT,
      timeout: 20_000,
    });
    expect(stderr).toBe("");
    expect(JSON.parse(stdout)).toEqual({ ok: true, output: "earlylate" });
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
