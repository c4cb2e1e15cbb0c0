/**
 * The `outpost` command end to end against `local` (the real agent on this machine): help and usage errors, the
 * exit codes, streamed output, Ctrl-C aborting a remote command, the file commands, find, watch and doctor.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, run, start } from "./run-cli.js";

const FAKE_AGENT = fileURLToPath(new URL("../../sdk/test/fixtures/fake-agent.mjs", import.meta.url));

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-cli-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Whether `pid` is running (a zombie, killed and waiting to be reaped, is not). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0] !== "Z";
  } catch {
    return false;
  }
}

/** Waits up to 3 s for `pid` to stop running. */
async function gone(pid: number): Promise<boolean> {
  const deadline = Date.now() + 3000;
  while (running(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return !running(pid);
}

const COMMANDS = ["exec", "sh", "ls", "cat", "put", "get", "rm", "find", "grep", "watch", "hosts", "deploy", "doctor"];

describe("help and usage", () => {
  it("prints help with the exit codes for the program and every command, exiting 0", async () => {
    const top = await run(["--help"]);
    expect(top.code).toBe(0);
    for (const command of COMMANDS) expect(top.stdout).toContain(`  ${command} `);
    for (const command of [...COMMANDS, "hosts scan", "hosts accept", "hosts forget"]) {
      const help = await run([...command.split(" "), "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`Usage: outpost ${command}`);
      if (command !== "hosts") expect(help.stdout, command).toContain("Exit codes: 0 ok, 1 failure, 2 usage error");
    }
  });

  it("exits 2 on a usage error: unknown command, missing argument, bad option value, SSH-only command on local", async () => {
    for (const args of [["bogus"], ["sh", "local"], ["find", "local", ".", "--limit", "zero"], ["deploy", "local"]]) {
      const result = await run(args);
      expect(result.code, args.join(" ")).toBe(2);
      // The error line carries its code like every other failure; commander's hint follows it.
      expect(result.stderr, args.join(" ")).toMatch(/^outpost: \S.* \[usage\]\n\(run with --help for usage\)\n$/);
    }
  });
});

describe("exec and sh", () => {
  it("streams stdout and stderr and passes the exit code through", async () => {
    const result = await run(["exec", "local", "--", "sh", "-c", "echo out; echo err >&2; exit 7"]);
    expect(result).toMatchObject({ code: 7, stdout: "out\n", stderr: "err\n" });
    const shell = await run(["sh", "local", "printf '%s\\n' one two; exit 3"]);
    expect(shell).toMatchObject({ code: 3, stdout: "one\ntwo\n" });
    expect((await run(["sh", "local", "true"])).code).toBe(0);
  });

  it("passes argv through without a shell", async () => {
    const result = await run(["exec", "local", "--", "printf", "[%s]", "a b", "$HOME", "-n"]);
    expect(result).toMatchObject({ code: 0, stdout: "[a b][$HOME][-n]" });
  });

  it("runs in --cwd", async () => {
    const result = await run(["-C", dir, "sh", "local", "pwd"]);
    expect(result).toMatchObject({ code: 0, stdout: `${dir}\n` });
  });

  it("reports a command that cannot start as a failure, exit 1", async () => {
    const result = await run(["exec", "local", "--", join(dir, "no-such-program")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^outpost: command: .* \[spawn_error\]\n$/);
  });

  it("Ctrl-C (SIGINT) aborts the remote command and exits 130", async () => {
    const running = start(["sh", "local", "echo $$; exec sleep 30"]);
    await running.waitFor("\n");
    const pid = Number(running.stdout().trim());
    expect(Number.isSafeInteger(pid)).toBe(true);
    const began = Date.now();
    running.child.kill("SIGINT");
    const result = await running.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toBe("outpost: command: interrupted [aborted]\n");
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(await gone(pid)).toBe(true);
  });
});

describe("files", () => {
  it("put, cat, get, ls and rm round-trip a file", async () => {
    const local = join(dir, "source.bin");
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 0x61]);
    await writeFile(local, bytes);
    const remoteDir = join(dir, "remote");
    await mkdir(remoteDir);
    const remote = join(remoteDir, "copy.bin");
    expect((await run(["put", "local", local, remote])).code).toBe(0);
    const cat = start(["cat", "local", remote]);
    const chunks: Buffer[] = [];
    cat.child.stdout?.removeAllListeners("data");
    cat.child.stdout?.setEncoding("latin1").on("data", (chunk: string) => chunks.push(Buffer.from(chunk, "latin1")));
    expect((await cat.done).code).toBe(0);
    expect(Buffer.concat(chunks)).toEqual(bytes);
    const back = join(dir, "back.bin");
    expect((await run(["get", "local", remote, back])).code).toBe(0);
    expect(await readFile(back)).toEqual(bytes);
    expect((await run(["put", "local", "-", join(remoteDir, "typed.txt")], {}, "from stdin\n")).code).toBe(0);
    await mkdir(join(remoteDir, "sub"));
    const ls = await run(["ls", "local", remoteDir]);
    expect(ls.code).toBe(0);
    expect(ls.stdout.split("\n").map((line) => line.trim().split(/\s+/))).toEqual([
      ["7", "copy.bin"],
      [expect.any(String), "sub/"],
      ["11", "typed.txt"],
      [""],
    ]);
    expect((await run(["rm", "local", remote])).code).toBe(0);
    expect(existsSync(remote)).toBe(false);
    const notDir = await run(["rm", "local", join(remoteDir, "sub")]);
    expect(notDir.code).toBe(1);
    expect((await run(["rm", "-r", "local", join(remoteDir, "sub")])).code).toBe(0);
    expect(existsSync(join(remoteDir, "sub"))).toBe(false);
  });

  it("exits 1 with the error code for a missing file", async () => {
    const result = await run(["cat", "local", join(dir, "missing")]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^outpost: cat .*missing: .*\[not_found\]\n$/);
  });

  it("names the code of a local file failure too (put from, get to)", async () => {
    const put = await run(["put", "local", join(dir, "no-such-source"), join(dir, "copy")]);
    expect(put.code).toBe(1);
    expect(put.stderr).toMatch(/^outpost: put: cannot read .*no-such-source: .* \[not_found\]\n$/);
    const source = join(dir, "get-source.txt");
    await writeFile(source, "x");
    const get = await run(["get", "local", source, join(dir, "no-such-dir", "copy")]);
    expect(get.code).toBe(1);
    expect(get.stderr).toMatch(/^outpost: get: cannot write .*copy: .* \[not_found\]\n$/);
  });

  it("reports a failed write to stdout other than a closed pipe as a failure with its code", async () => {
    // /dev/full fails every write with ENOSPC, as a full disk behind `>` would.
    const devFull = openSync("/dev/full", "w");
    const full = spawnSync(process.execPath, [BIN, "sh", "local", "echo hello"], {
      stdio: ["ignore", devFull, "pipe"],
      encoding: "utf8",
    });
    closeSync(devFull);
    expect(full.status).toBe(1);
    expect(full.stderr).toMatch(/^outpost: cannot write to stdout: .*ENOSPC.* \[unknown\]\n$/);
  });

  it("find lists files gitignore-aware, with --glob and --limit", async () => {
    const tree = join(dir, "tree");
    await mkdir(join(tree, "src"), { recursive: true });
    await writeFile(join(tree, ".gitignore"), "*.log\n");
    for (const name of ["a.ts", "b.ts", "c.md", "debug.log"]) await writeFile(join(tree, "src", name), "");
    const all = await run(["find", "local", tree]);
    expect(all).toMatchObject({ code: 0, stdout: ".gitignore\nsrc/a.ts\nsrc/b.ts\nsrc/c.md\n" });
    const globbed = await run(["find", "local", tree, "--glob", "*.ts", "--limit", "1"]);
    expect(globbed).toMatchObject({ code: 0, stdout: "src/a.ts\n" });
    expect(globbed.stderr).toContain("stopped at the limit of 1");
    const unignored = await run(["find", "local", tree, "--no-ignore", "--no-hidden", "-g", "*.log"]);
    expect(unignored).toMatchObject({ code: 0, stdout: "src/debug.log\n" });
  });

  it("says clearly when the agent lacks a feature (find on an agent without listFiles)", async () => {
    // The SDK's fake agent speaks protocol 1 and announces no listFiles, as an agent from before it would.
    const fake = join(dir, "old-agent.sh");
    await writeFile(
      fake,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_AGENT)} good "$@"\n`,
      {
        mode: 0o755,
      },
    );
    const result = await run(["--agent-binary", fake, "find", "local", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `outpost: find ${dir}: the agent does not support listFiles; this agent is older than the feature (\`outpost deploy\` a newer one) [not_supported]\n`,
    );
  });

  it("watch prints a change as it comes and stops on Ctrl-C with exit 0", async () => {
    const watched = join(dir, "watched");
    await mkdir(watched);
    const running = start(["watch", "local", watched]);
    await running.waitFor("Ctrl-C stops", "stderr");
    await writeFile(join(watched, "new.txt"), "x");
    await running.waitFor(join(watched, "new.txt"));
    running.child.kill("SIGINT");
    expect((await running.done).code).toBe(0);
  });
});

describe("doctor", () => {
  it("reports the agent's checks and the connection facts for local", async () => {
    const result = await run(["doctor", "local", "--json"]);
    const report = JSON.parse(result.stdout);
    expect(result.code).toBe(report.ok ? 0 : 1);
    expect(report).toMatchObject({ target: "local", platform: `linux-${process.arch}` });
    expect(report.roundTripMs).toBeGreaterThan(0);
    expect(report.checks.map((check: { name: string }) => check.name)).toContain("shell");
    const text = await run(["doctor", "local"]);
    expect(text.stdout).toMatch(/^target {6}local\nplatform {4}linux-/);
    expect(text.stdout).toMatch(/\n\w+ +shell +\S/);
  });
});
