// `tools/dist.sh` end to end: it cross-compiles two agents into a temp directory, and the manifest it writes must
// describe exactly those files; the Linux agent must be static and report the SDK's version; the build must be
// reproducible.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentManifest, readManifest } from "../src/env/agent-binary.js";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));
const distScript = join(repo, "tools", "dist.sh");
const sdkVersion: string = JSON.parse(await readFile(join(repo, "sdk", "package.json"), "utf8")).version;
const only = ["linux-x64", "windows-x64"];

/** Builds the agents of `only` into `out` and returns the manifest read back by the SDK. */
async function dist(out: string): Promise<AgentManifest> {
  // VERSION and LDFLAGS are dropped so the script's defaults (the ones `make dist` mirrors) are what is tested.
  const { VERSION: _version, LDFLAGS: _ldflags, ...inherited } = process.env;
  await run(distScript, [], { cwd: repo, env: { ...inherited, OUT: out, ONLY: only.join(" ") }, timeout: 50_000 });
  const manifest = readManifest(out);
  if (manifest === undefined) throw new Error(`dist.sh wrote no manifest in ${out}`);
  return manifest;
}

async function sha256(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
}

/** The `p_type` values of an ELF64 little-endian file's program headers. */
function programHeaderTypes(elf: Buffer): number[] {
  expect(elf.subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46])); // \x7fELF
  expect(elf[4]).toBe(2); // ELFCLASS64
  expect(elf[5]).toBe(1); // little-endian
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  expect(phnum).toBeGreaterThan(0);
  return Array.from({ length: phnum }, (_, index) => elf.readUInt32LE(phoff + index * phentsize));
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;

describe.runIf(process.platform === "linux" && process.arch === "x64")("tools/dist.sh", () => {
  let work: string;
  let first: AgentManifest;
  let firstDir: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "outpost-dist-"));
    firstDir = join(work, "first");
    first = await dist(firstDir);
  }, 55_000);
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("writes a manifest of exactly the requested agents, at the SDK's version", () => {
    expect(first.version).toBe(sdkVersion);
    expect(Object.keys(first.agents).sort()).toEqual([...only].sort());
    expect(first.agents["linux-x64"].path).toBe("linux-x64/outpost");
    expect(first.agents["windows-x64"].path).toBe("windows-x64/outpost.exe");
  });

  it("lists every file with its exact size and SHA-256", async () => {
    for (const entry of Object.values(first.agents)) {
      const file = join(firstDir, entry.path);
      expect((await stat(file)).size).toBe(entry.size);
      expect(await sha256(file)).toBe(entry.sha256);
      expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("builds a static Linux agent that reports the SDK's version", async () => {
    const binary = join(firstDir, first.agents["linux-x64"].path);
    const types = programHeaderTypes(await readFile(binary));
    expect(types).toContain(PT_LOAD);
    expect(types).not.toContain(PT_INTERP);
    expect(types).not.toContain(PT_DYNAMIC);
    const { stdout } = await run(binary, ["--version"], { timeout: 10_000 });
    expect(stdout.trim()).toBe(`outpost ${sdkVersion}`);
  });

  it("builds a Windows agent (a PE file)", async () => {
    const binary = await readFile(join(firstDir, first.agents["windows-x64"].path));
    expect(binary.subarray(0, 2).toString("latin1")).toBe("MZ");
    // The PE header the DOS stub points at.
    const peOffset = binary.readUInt32LE(0x3c);
    expect(binary.subarray(peOffset, peOffset + 4)).toEqual(Buffer.from("PE\0\0", "latin1"));
  });

  it("is reproducible: a second build gives the same hashes", async () => {
    const second = await dist(join(work, "second"));
    expect(second).toEqual(first);
  }, 55_000);
});
