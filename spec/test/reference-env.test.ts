import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Context, Result, ShellOutputInfo } from "@outpost/sdk";
import { err, FileError } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const posix = process.platform !== "win32";
const live: Context = { abortSignal: undefined };
const aborted: Context = { abortSignal: AbortSignal.abort() };

let root: string;
let env: NodeExecutionEnv;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "outpost-reference-"));
  env = new NodeExecutionEnv({ cwd: root });
});

afterEach(async () => {
  await env.cleanup(live);
  await rm(root, { recursive: true, force: true });
});

function failure<T>(result: Result<T, FileError>): { code: string; path: string | undefined; message: string } {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return { code: result.error.code, path: result.error.path, message: result.error.message };
}

function value<T, E>(result: Result<T, E>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

describe("reference NodeExecutionEnv: paths", () => {
  it("resolves ~, file:// URLs, relative paths, trailing slashes and .. textually", async () => {
    expect(value(await env.absolutePath("~", live))).toBe(homedir());
    expect(value(await env.absolutePath("~/a/../b", live))).toBe(join(homedir(), "b"));
    expect(value(await env.absolutePath("~user", live))).toBe(join(root, "~user"));
    expect(value(await env.absolutePath("file:///tmp/a%20b", live))).toBe("/tmp/a b");
    expect(value(await env.absolutePath("file://elsewhere/x", live))).toBe(join(root, "file:/elsewhere/x"));
    expect(value(await env.absolutePath("x/y/", live))).toBe(join(root, "x/y"));
    expect(value(await env.absolutePath("", live))).toBe(root);
    expect(value(await env.joinPath(["a/", "b/"], live))).toBe("a/b/");
    expect(value(await env.joinPath([], live))).toBe(".");
  });

  it("writeFile of 'x/' creates a file x", async () => {
    value(await env.writeFile("x/", "data", live));
    expect(statSync(join(root, "x")).isFile()).toBe(true);
  });
});

describe("reference NodeExecutionEnv: files", () => {
  it("keeps the BOM in readTextFile and drops it in the line reader; only LF splits", async () => {
    await writeFile(join(root, "t.txt"), Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from("one\r\n\ntwo\npartial")]));
    expect(value(await env.readTextFile("t.txt", live))).toBe("\uFEFFone\r\n\ntwo\npartial");
    expect(value(await env.readTextLines("t.txt", undefined, live))).toEqual(["one\r", "", "two", "partial"]);
    expect(value(await env.readTextLines("t.txt", { maxLines: 1.5 }, live))).toEqual(["one\r", ""]);
    const reader = value(await env.openTextLineReader("t.txt", live));
    expect(value(await reader.readLine(live))).toEqual({ text: "one\r", terminated: true });
    await reader.close(live);
    expect(failure(await reader.readLine(live)).code).toBe("invalid");
    expect(failure(await reader.readLine(aborted)).code).toBe("aborted");
  });

  it("short-circuits readTextLines with maxLines <= 0 even for a missing file under abort", async () => {
    expect(value(await env.readTextLines("missing", { maxLines: 0 }, aborted))).toEqual([]);
    expect(failure(await env.readTextLines("missing", { maxLines: Number.NaN }, live)).code).toBe("not_found");
  });

  it("reports not_found with the resolved path, and a parent that is a file with the parent's path", async () => {
    expect(failure(await env.readTextFile("nope.txt", live))).toMatchObject({
      code: "not_found",
      path: join(root, "nope.txt"),
    });
    await writeFile(join(root, "file"), "x");
    const parentIsFile = failure(await env.writeFile("file/child", "x", live));
    expect(parentIsFile).toMatchObject({ code: "unknown", path: join(root, "file") });
    expect(parentIsFile.message).toBe(`EEXIST: file already exists, mkdir '${join(root, "file")}'`);
    const deeper = failure(await env.writeFile("file/a/b", "x", live));
    expect(deeper).toMatchObject({ code: "not_directory", path: join(root, "file/a") });
    expect(failure(await env.renameFile("gone", "dest", aborted)).path).toBe(join(root, "dest"));
    expect(failure(await env.renameFile("gone", "dest", live))).toMatchObject({
      code: "not_found",
      path: join(root, "gone"),
    });
  });

  it("appendFile appends and still returns aborted only when the signal was already set", async () => {
    value(await env.appendFile("deep/a.txt", "ab", live));
    value(await env.appendFile("deep/a.txt", "cd", live));
    expect(readFileSync(join(root, "deep/a.txt"), "utf8")).toBe("abcd");
    expect(failure(await env.appendFile("deep/a.txt", "ef", aborted)).code).toBe("aborted");
    expect(readFileSync(join(root, "deep/a.txt"), "utf8")).toBe("abcd");
  });

  it("validates truncate sizes and extends with zeros", async () => {
    await writeFile(join(root, "f"), "abc");
    for (const size of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(failure(await env.truncateFile("f", size, live))).toMatchObject({
        code: "invalid",
        path: join(root, "f"),
      });
    }
    value(await env.truncateFile("f", 5, live));
    expect([...readFileSync(join(root, "f"))]).toEqual([0x61, 0x62, 0x63, 0, 0]);
    value(await env.truncateFile("f", -0, live));
    expect(readFileSync(join(root, "f")).length).toBe(0);
    expect(failure(await env.truncateFile("missing", 0, live)).code).toBe("not_found");
  });

  it("reads byte ranges and scans lines through a binary reader that survives a rename", async () => {
    await writeFile(join(root, "data.txt"), "hello world");
    const reader = value(await env.openBinaryReader("data.txt", undefined, live));
    expect(value(await reader.info(live))).toMatchObject({ name: "data.txt", kind: "file", size: 11 });
    await writeFile(join(root, "data.txt.new"), "other");
    await rm(join(root, "data.txt"));
    expect(Buffer.from(value(await reader.read(6, 100, live))).toString()).toBe("world");
    const empty = value(await reader.read(0, 0, live));
    expect(empty).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(empty)).toBe(false);
    expect(failure(await reader.read(-1, 1, live)).code).toBe("invalid");
    expect(failure(await reader.scanLines({ startLine: 2, endLine: 2 }, live)).code).toBe("invalid");
    expect(value(await reader.scanLines({ startLine: 0 }, live))).toMatchObject({ newlines: 0, start: 0, end: 11 });
    await reader.close(live);
    await reader.close(live);
    expect(failure(await reader.info(live)).message).toBe("Binary reader is closed");
    expect(failure(await reader.info(aborted)).code).toBe("aborted");
    expect(failure(await env.openBinaryReader(".", undefined, live)).code).toBe("is_directory");
  });

  it.runIf(posix)("refuses a final symlink with noFollow but follows intermediate ones; FIFO is invalid", async () => {
    await mkdir(join(root, "dir"));
    await writeFile(join(root, "dir/inner.txt"), "x");
    await symlink("dir", join(root, "dirlink"));
    await symlink("dir/inner.txt", join(root, "link.txt"));
    expect(failure(await env.openBinaryReader("link.txt", { noFollow: true }, live))).toMatchObject({
      code: "invalid",
      message: "Refusing to follow a symbolic link",
    });
    const reader = value(await env.openBinaryReader("dirlink/inner.txt", { noFollow: true }, live));
    await reader.close(live);
    execFileSync("mkfifo", [join(root, "fifo")]);
    expect(failure(await env.openBinaryReader("fifo", undefined, live))).toMatchObject({
      code: "invalid",
      message: "Not a regular file",
    });
    expect(failure(await env.fileInfo("fifo", live)).message).toBe("Unsupported file type");
    expect(failure(await env.exists("fifo", live)).code).toBe("invalid");
    expect(value(await env.exists("link.txt", live))).toBe(true);
    expect(value(await env.exists("nothing", live))).toBe(false);
  });
});

describe("reference NodeExecutionEnv: directories and temp files", () => {
  it("lists in bytewise order and pages through a directory reader", async () => {
    for (const name of ["b", "a2", "_x", "Z", "a", "C", "é"]) await writeFile(join(root, name), name);
    const names = value(await env.listDir(".", live)).map((info) => info.name);
    expect(names).toEqual(["C", "Z", "_x", "a", "a2", "b", "é"]);
    const reader = value(await env.openDirReader(".", live));
    expect(failure(await reader.next(0, live)).code).toBe("invalid");
    const seen: string[] = [];
    for (;;) {
      const page = value(await reader.next(3, live));
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries.map((info) => info.name));
      if (page.done) break;
    }
    expect(seen.sort()).toEqual([...names].sort());
    expect(value(await reader.next(3, live))).toEqual({ entries: [], done: true });
    await reader.close(live);
    expect(failure(await reader.next(1, aborted)).code).toBe("aborted");
    expect(failure(await reader.next(1, live)).message).toBe("Directory reader is closed");
  });

  it("removes, refusing a directory without recursive", async () => {
    await mkdir(join(root, "d/e"), { recursive: true });
    const refused = failure(await env.remove("d", undefined, live));
    expect(refused).toMatchObject({ code: "unknown", path: join(root, "d") });
    expect(refused.message).toBe(`Path is a directory: rm returned EISDIR (is a directory) ${join(root, "d")}`);
    value(await env.remove("d", { recursive: true }, live));
    expect(existsSync(join(root, "d"))).toBe(false);
    value(await env.remove("d", { force: true }, live));
    expect(failure(await env.createDir("a/b", { recursive: false }, live)).code).toBe("not_found");
    value(await env.createDir("a/b", undefined, live));
    value(await env.createDir("a/b", undefined, live));
  });

  it("names temp dirs tmp-XXXXXX and temp files <prefix><uuid><suffix> in a fresh dir", async () => {
    const dir = value(await env.createTempDir(undefined, live));
    expect(dirname(dir)).toBe(tmpdir());
    expect(basename(dir)).toMatch(/^tmp-[A-Za-z0-9]{6}$/);
    const file = value(await env.createTempFile({ prefix: "p-", suffix: ".s" }, live));
    expect(basename(file)).toMatch(/^p-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.s$/);
    expect(basename(dirname(file))).toMatch(/^tmp-[A-Za-z0-9]{6}$/);
    expect(readFileSync(file).length).toBe(0);
    expect(failure(await env.createTempDir("x", aborted))).toMatchObject({ code: "aborted", path: undefined });
    await rm(dir, { recursive: true });
    await rm(dirname(file), { recursive: true });
  });
});

describe.runIf(posix)("reference NodeExecutionEnv: exec", () => {
  it("tags streams, returns non-zero exit codes and 128+signal", async () => {
    const chunks: [string, ShellOutputInfo][] = [];
    const result = await env.exec(
      "printf out; printf err >&2; printf more; exit 7",
      { onOutput: (text, _context, info) => chunks.push([text, info]) },
      live,
    );
    expect(result).toEqual({ ok: true, value: { exitCode: 7 } });
    const by = (stream: string) =>
      chunks
        .filter(([, info]) => info.stream === stream)
        .map(([text]) => text)
        .join("");
    expect(by("stdout")).toBe("outmore");
    expect(by("stderr")).toBe("err");
    for (const [, info] of chunks) expect(Object.keys(info)).toEqual(["stream"]);
    expect(await env.exec("kill -9 $$", undefined, live)).toEqual({ ok: true, value: { exitCode: 137 } });
    expect(
      await env.exec(
        ["sh", "-c", 'printf "%s|%s" "$1" "$2"; exit 3', "a0", "x; touch pwned", "$(id)"],
        undefined,
        live,
      ),
    ).toEqual({ ok: true, value: { exitCode: 3 } });
    expect(existsSync(join(root, "pwned"))).toBe(false);
  });

  it("validates before spawning, with Durable's messages", async () => {
    const message = async (...args: Parameters<NodeExecutionEnv["exec"]>) => {
      const result = await env.exec(...args);
      if (result.ok) throw new Error("expected a failure");
      return [result.error.code, result.error.message];
    };
    expect(await message("true", undefined, aborted)).toEqual(["aborted", "aborted"]);
    for (const timeout of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await message("true", { timeout }, live)).toEqual([
        "timeout",
        "Invalid timeout: must be a finite number of seconds",
      ]);
    }
    expect(await message("true", { timeout: 2_147_484 }, live)).toEqual([
      "timeout",
      "Invalid timeout: maximum is 2147483.647 seconds",
    ]);
    expect(await message([], undefined, live)).toEqual(["spawn_error", "Empty argv: no program to run"]);
    env.cwd = join(root, "missing/../gone");
    expect(await message("true", undefined, live)).toEqual([
      "spawn_error",
      `Working directory does not exist: ${join(root, "missing/../gone")}\nCannot execute bash commands.`,
    ]);
    env.cwd = root;
    expect(await message("true", { cwd: "missing/../gone" }, live)).toEqual([
      "spawn_error",
      `Working directory does not exist: ${join(root, "gone")}\nCannot execute bash commands.`,
    ]);
    expect(await message(["outpost-missing-program"], undefined, live)).toEqual([
      "spawn_error",
      "spawn outpost-missing-program ENOENT",
    ]);
    const custom = new NodeExecutionEnv({ cwd: root, shellPath: join(root, "no-shell") });
    const noShell = await custom.exec("true", undefined, live);
    expect(noShell.ok ? undefined : [noShell.error.code, noShell.error.message]).toEqual([
      "shell_unavailable",
      `Custom shell path not found: ${join(root, "no-shell")}`,
    ]);
  });

  it("distinguishes timeout from abort and turns a throwing onOutput into callback_error", async () => {
    const timedOut = await env.exec("sleep 5", { timeout: 0.1 }, live);
    expect(timedOut.ok ? undefined : [timedOut.error.code, timedOut.error.message]).toEqual(["timeout", "timeout:0.1"]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const abortedRun = await env.exec("sleep 5", undefined, { abortSignal: controller.signal });
    expect(abortedRun.ok ? undefined : abortedRun.error.code).toBe("aborted");
    const failing = await env.exec(
      "echo one; sleep 5",
      {
        onOutput: () => {
          throw new Error("callback failed");
        },
      },
      live,
    );
    expect(failing.ok ? undefined : [failing.error.code, failing.error.message]).toEqual([
      "callback_error",
      "callback failed",
    ]);
  });

  it("merges the environment (later wins, empty string shadows) or uses only env without inheritEnv", async () => {
    const shellEnvEnv = new NodeExecutionEnv({ cwd: root, shellEnv: { A: "shell", B: "shell" } });
    let out = "";
    await shellEnvEnv.exec(
      'printf "%s,%s," "$A" "$B"; printenv HOME >/dev/null && printf set',
      { env: { B: "" }, onOutput: (t) => (out += t) },
      live,
    );
    expect(out).toBe("shell,,set");
    out = "";
    await shellEnvEnv.exec(
      'printf "%s," "$A"; printenv HOME >/dev/null && printf set',
      { inheritEnv: false, env: { A: "only" }, onOutput: (t) => (out += t) },
      live,
    );
    expect(out).toBe("only,");
  });

  it("drops a leading BOM per stream and keeps a later U+FEFF", async () => {
    let out = "";
    let calls = 0;
    await env.exec("printf '\\357\\273\\277'", { onOutput: () => calls++ }, live);
    expect(calls).toBe(0);
    await env.exec("printf '\\357\\273\\277a\\357\\273\\277\\342\\202'", { onOutput: (t) => (out += t) }, live);
    expect(out).toBe("a\uFEFF\uFFFD");
  });

  it("spills the complete raw output past the thresholds, and not below them", async () => {
    const small = await env.exec("printf short", { spill: { afterBytes: 100, afterLines: 10 } }, live);
    expect(small).toEqual({ ok: true, value: { exitCode: 0 } });
    const big = value(
      await env.exec(
        "head -c 500000 /dev/zero | tr '\\0' x; printf '\\146\\200\\000\\157' >&2",
        {
          spill: { afterBytes: 1000, afterLines: 1000 },
        },
        live,
      ),
    );
    expect(big.exitCode).toBe(0);
    const spillPath = big.spillPath ?? "";
    expect(basename(spillPath)).toMatch(/^pi-output-[0-9a-f-]{36}\.log$/);
    const bytes = await readFile(spillPath);
    expect(bytes.length).toBe(500_004);
    expect([...bytes.subarray(bytes.indexOf(0x66))]).toEqual([0x66, 0x80, 0x00, 0x6f]);
    await rm(dirname(spillPath), { recursive: true });
  });

  it("fails a spill whose file cannot be created, through this.createTempFile", async () => {
    class FailingSpill extends NodeExecutionEnv {
      override async createTempFile(options: { prefix?: string; suffix?: string } | undefined, context: Context) {
        if (options?.prefix === "pi-output-") return err(new FileError("unknown", "no space"));
        return super.createTempFile(options, context);
      }
    }
    const failing = new FailingSpill({ cwd: root });
    const result = await failing.exec(
      "yes | head -c 100000; sleep 5",
      { spill: { afterBytes: 10, afterLines: 10 } },
      live,
    );
    expect(result.ok ? undefined : [result.error.code, result.error.message, result.error.spillPath]).toEqual([
      "unknown",
      "Failed to preserve complete shell output: no space",
      undefined,
    ]);
  });

  it("cleanup kills running commands, which settle with 137", async () => {
    const running = env.exec("sleep 5", undefined, live);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await env.cleanup(live);
    expect(await running).toEqual({ ok: true, value: { exitCode: 137 } });
  });

  it("settles 100 ms after a background descendant keeps the pipes open", async () => {
    const started = Date.now();
    const result = await env.exec("sleep 3 & echo started", undefined, live);
    expect(result).toEqual({ ok: true, value: { exitCode: 0 } });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
