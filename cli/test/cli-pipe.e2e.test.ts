/**
 * `outpost … | head`: the CLI as a Unix tool when its reader goes away. Each command's output goes through a real
 * OS pipe into a real `head`, and is far larger than a pipe's buffer, so the CLI writes after head has exited: it
 * must end quietly (no EPIPE stack trace, nothing on stderr) by SIGPIPE as `seq 1e9 | head -1` does (the shell's
 * status 141), and a command still running on the target (`exec`, `sh`) must be stopped, not left writing. `watch`
 * ends at the first change it cannot print.
 */
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeIntoHead } from "./run-cli.js";

let dir: string;
/** A directory of 5000 files with long names: `ls` and `find` print ~400 KiB. */
let many: string;
/** A file of 100000 numbered lines (~700 KiB). */
let big: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-cli-pipe-"));
  many = join(dir, "many");
  await mkdir(many);
  const names = Array.from({ length: 5000 }, (_, index) => `file-${String(index).padStart(5, "0")}-${"x".repeat(60)}`);
  await Promise.all(names.map((name) => writeFile(join(many, name), "")));
  big = join(dir, "big.txt");
  await writeFile(big, Array.from({ length: 100_000 }, (_, index) => `line ${index}\n`).join(""));
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

/** The CLI ended as `seq 1e9 | head -1`'s writer does: killed by SIGPIPE, nothing on stderr. */
function expectQuietSigpipe(cli: { code: number | null; signal: NodeJS.Signals | null; stderr: string }): void {
  expect(cli.stderr).toBe("");
  expect({ code: cli.code, signal: cli.signal }).toEqual({ code: null, signal: "SIGPIPE" });
}

describe("output piped into head", () => {
  it("ls ends quietly with its reader", async () => {
    const { head, cli } = await pipeIntoHead(["ls", "local", many], ["-n", "1"]);
    expect(head).toBe(`         0  file-00000-${"x".repeat(60)}\n`);
    expectQuietSigpipe(cli);
  });

  it("find ends quietly with its reader", async () => {
    const { head, cli } = await pipeIntoHead(["find", "local", many], ["-n", "1"]);
    expect(head).toMatch(/^file-\d{5}-x{60}\n$/);
    expectQuietSigpipe(cli);
  });

  it("cat and get - end quietly with their reader", async () => {
    for (const args of [
      ["cat", "local", big],
      ["get", "local", big, "-"],
    ]) {
      const { head, cli } = await pipeIntoHead(args, ["-n", "2"]);
      expect(head, args.join(" ")).toBe("line 0\nline 1\n");
      expectQuietSigpipe(cli);
    }
  });

  it("watch ends quietly with its reader at the next change it prints", async () => {
    const watched = join(dir, "watched");
    await mkdir(watched);
    const { head, cli } = await pipeIntoHead(["watch", "local", watched], ["-n", "1"], {}, async (watching) => {
      const deadline = Date.now() + 15_000;
      while (!watching.stderr().includes("Ctrl-C stops")) {
        if (Date.now() > deadline) throw new Error(`watch did not start: ${watching.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The first change reaches head, which exits; a later one is written to the closed pipe.
      for (let index = 0; !watching.ended() && Date.now() < deadline; index++) {
        await writeFile(join(watched, `change-${index}`), "x");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    expect(head).toBe(`${join(watched, "change-0")}\n`);
    expect(cli.stderr).toMatch(/^outpost: watching .*; Ctrl-C stops\n$/);
    expect({ code: cli.code, signal: cli.signal }).toEqual({ code: null, signal: "SIGPIPE" });
  });

  it("exec and sh end quietly with their reader and stop the command on the target", async () => {
    const pidFile = join(dir, "writer.pid");
    for (const args of [
      ["sh", "local", `echo $$ > ${pidFile}; exec yes`],
      ["exec", "local", "--", "sh", "-c", `echo $$ > ${pidFile}; exec yes`],
    ]) {
      await rm(pidFile, { force: true });
      const { head, cli } = await pipeIntoHead(args, ["-n", "1"]);
      expect(head, args.join(" ")).toBe("y\n");
      expectQuietSigpipe(cli);
      const pid = Number((await readFile(pidFile, "utf8")).trim());
      expect(Number.isSafeInteger(pid) && pid > 0).toBe(true);
      // The CLI waited for the agent to kill the command before it ended.
      expect(running(pid), `${args.join(" ")}: pid ${pid} still running`).toBe(false);
    }
  });
});
