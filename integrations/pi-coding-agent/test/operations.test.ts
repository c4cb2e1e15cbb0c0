/**
 * The adapters' own rules, on the real agent (LocalExecutionEnv): Node-style errors, image detection through the
 * binary reader (never blocking on a FIFO), only changed variables sent to bash, and the full-output file moved off
 * this machine's temp directory.
 */
import "./pi-setup.js";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createLsToolDefinition, getAgentDir } from "@mariozechner/pi-coding-agent";
import { FileError, LocalExecutionEnv } from "@outpost/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  changedVariables,
  createOutpostBashToolDefinition,
  createOutpostLsOperations,
  createOutpostReadOperations,
  toNodeError,
} from "../src/index.js";
import { LOCAL_FULL_OUTPUT } from "./differential.js";

describe("pi-coding-agent adapters", () => {
  let root: string;
  let env: LocalExecutionEnv;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "outpost-pi-ops-"));
    writeFileSync(join(root, "text.txt"), "just text\n");
    writeFileSync(join(root, "pixel.gif"), Buffer.from("R0lGODlhAQABAAAAACwAAAAAAQABAAA=", "base64"));
    execFileSync("mkfifo", [join(root, "fifo")]);
    env = new LocalExecutionEnv({ cwd: root });
  });

  afterAll(async () => {
    await env?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("throws Node's errors for a failed access: code, errno, syscall, path and message", async () => {
    const ops = createOutpostReadOperations(env);
    const missing = join(root, "missing.txt");
    await expect(ops.access(missing)).rejects.toMatchObject({
      code: "ENOENT",
      errno: -2,
      syscall: "access",
      path: missing,
      message: `ENOENT: no such file or directory, access '${missing}'`,
    });
  });

  it("takes the errno from the error's cause, else from its code", () => {
    const cause = Object.assign(new Error("EEXIST: file already exists, mkdir '/x'"), { code: "EEXIST" });
    expect(toNodeError(new FileError("unknown", cause.message, "/x", cause))).toMatchObject({
      code: "EEXIST",
      message: "EEXIST: file already exists, mkdir '/x'",
    });
    expect(
      toNodeError(new FileError("not_directory", "not a directory", "/f/x"), { syscall: "stat", path: "/f/x" }),
    ).toMatchObject({ code: "ENOTDIR", message: "ENOTDIR: not a directory, stat '/f/x'" });
  });

  it("detects images from their leading bytes and never opens a FIFO blocking", async () => {
    const ops = createOutpostReadOperations(env);
    expect(await ops.detectImageMimeType?.(join(root, "pixel.gif"))).toBe("image/gif");
    expect(await ops.detectImageMimeType?.(join(root, "text.txt"))).toBeNull();
    // With no writer, opening the FIFO for reading would wait forever; the binary reader opens it non-blocking.
    expect(await ops.detectImageMimeType?.(join(root, "fifo"))).toBeNull();
    await expect(ops.access(join(root, "fifo"))).resolves.toBeUndefined();
  });

  it("sends only the variables that differ from this process's, without pi's local tool directory", () => {
    const path = process.env.PATH ?? "";
    const vars = { ...process.env, PATH: `${join(getAgentDir(), "bin")}${delimiter}${path}`, OUTPOST_PI_TEST: "on" };
    expect(changedVariables(vars)).toEqual({ OUTPOST_PI_TEST: "on" });
    expect(changedVariables({ ...process.env })).toBeUndefined();
    expect(changedVariables({ ...process.env, PATH: "/opt/bin" })).toEqual({ PATH: "/opt/bin" });
  });

  it("runs a spawnHook's variables on the target", async () => {
    const bash = createOutpostBashToolDefinition(env, root, {
      spawnHook: (context) => ({ ...context, env: { ...context.env, OUTPOST_PI_GREETING: "hello from the hook" } }),
    });
    const result = await bash.execute(
      "call",
      { command: 'echo "$OUTPOST_PI_GREETING"' },
      undefined,
      undefined,
      undefined as never,
    );
    expect(result.content).toEqual([{ type: "text", text: "hello from the hook\n" }]);
  });

  it("answers ls's stat of listed entries from the directory reader, following only links on the target", async () => {
    const dir = join(root, "many");
    mkdirSync(dir);
    for (let n = 0; n < 30; n++) writeFileSync(join(dir, `f${n}.txt`), "");
    mkdirSync(join(dir, "sub"));
    symlinkSync("sub", join(dir, "link"));
    const calls: string[] = [];
    const counted = new Proxy(env, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push(String(name));
          return value.apply(target, args);
        };
      },
    });
    const ls = createLsToolDefinition(root, { operations: createOutpostLsOperations(counted) });
    const result = await ls.execute("call", { path: "many" }, undefined, undefined, undefined as never);
    const rows = (result.content[0] as { text: string }).text.split("\n");
    expect(rows).toHaveLength(32);
    expect(rows).toContain("link/");
    expect(rows).toContain("sub/");
    // exists + stat of the directory, then one stat for the link: 3 link resolutions, not one per entry.
    expect(calls.filter((name) => name === "canonicalPath")).toHaveLength(3);
  });

  it("moves the full-output file into a temp file of the env and names that one", async () => {
    const localFiles = () => readdirSync(tmpdir()).filter((name) => /^pi-bash-[0-9a-f]{16}\.log$/.test(name));
    const before = localFiles();
    const bash = createOutpostBashToolDefinition(env, root);
    const result = await bash.execute("call", { command: "seq 1 4000" }, undefined, undefined, undefined as never);
    const fullOutputPath = result.details?.fullOutputPath;
    expect(fullOutputPath).toMatch(/\/pi-bash-[0-9a-f-]+\.log$/);
    LOCAL_FULL_OUTPUT.lastIndex = 0;
    expect(LOCAL_FULL_OUTPUT.test(fullOutputPath!)).toBe(false);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain(`Full output: ${fullOutputPath}]`);
    const copied = await env.readTextFile(fullOutputPath!, { abortSignal: undefined });
    expect(copied.ok && copied.value).toBe(`${Array.from({ length: 4000 }, (_, n) => n + 1).join("\n")}\n`);
    // pi's local file is gone: the output stays only where the env keeps it.
    expect(localFiles()).toEqual(before);
  });
});
