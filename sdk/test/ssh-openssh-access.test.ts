/**
 * The OpenSSH transport's process side (`runSsh`, `opensshAccess`, `spawnOverOpenssh`) with a stand-in for the
 * `ssh` program: a script that runs the remote command here with `sh -c`, or fails as `ssh` itself fails (exit 255
 * and OpenSSH's own words) when told to by a variable of the environment it was given. What is checked: ssh's
 * verdicts read from exit 255 (host key changed, not trusted, anything else), a remote command's own exit codes
 * passed through, input written to the command, time limits, a missing program, and that the environment and stdio given are the ones used. ssh-openssh.test.ts checks the
 * command line; ssh.e2e.test.ts runs it against a real sshd.
 */
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { getOrThrow } from "../src/contract/result.js";
import { connectSsh } from "../src/ssh/connect.js";
import { type OpensshCommand, opensshAccess, runSsh, spawnOverOpenssh } from "../src/ssh/openssh.js";
import { output } from "./fixtures/env-output.js";
import { sshFailure } from "./fixtures/ssh-failure.js";
import { freePort } from "./fixtures/sshd.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-openssh-access-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const program = join(dir, "fake-ssh");
writeFileSync(
  program,
  [
    "#!/bin/sh",
    "# Stand-in for ssh: the last argument is the remote command, the others are ssh's options (ignored).",
    "for last; do :; done",
    'case "$FAKE_SSH" in',
    '  changed) echo "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@" >&2; exit 255 ;;',
    '  unknown) echo "Host key verification failed." >&2; exit 255 ;;',
    '  refused) echo "ssh: connect to host box port 22: Connection refused" >&2; exit 255 ;;',
    "esac",
    'exec sh -c "$last"',
    "",
  ].join("\n"),
);
chmodSync(program, 0o755);

function ssh(env: Record<string, string> = {}): OpensshCommand {
  return { program, args: ["-T", "--", "box"], env: { ...process.env, ...env } };
}

describe("opensshAccess", () => {
  it("reads ssh's exit 255 as its own failure: a changed key, an untrusted key, anything else", async () => {
    for (const [mode, code] of [
      ["changed", "host_key_changed"],
      ["unknown", "host_key_unknown"],
      ["refused", "remote"],
    ]) {
      const error = await sshFailure(opensshAccess(ssh({ FAKE_SSH: mode }), "box").run("true"));
      expect(error.code, mode).toBe(code);
    }
  });

  it("passes a remote command's own exit code and output through, its input at end of file", async () => {
    const access = opensshAccess(ssh(), "box");
    expect(await access.run("printf out; printf err >&2; exit 3")).toEqual({ stdout: "out", stderr: "err", code: 3 });
    expect(await access.run("cat; echo done")).toEqual({ stdout: "done\n", stderr: "", code: 0 });
    expect((await access.run('printf %s "$OUTPOST_FAKE_VAR"')).stdout).toBe("");
    const given = opensshAccess(ssh({ OUTPOST_FAKE_VAR: "from the command's env" }), "box");
    expect((await given.run('printf %s "$OUTPOST_FAKE_VAR"')).stdout).toBe("from the command's env");
  });

  it("writes the input to the command's stdin and waits for its output", async () => {
    const bytes = Buffer.alloc(200_000, 3);
    const access = opensshAccess(ssh(), "box");
    const result = await access.run("wc -c; cat >/dev/null", (stdin) => stdin.end(bytes));
    expect(result).toEqual({ stdout: `${bytes.length}\n`, stderr: "", code: 0 });
  });
});

describe("runSsh and spawnOverOpenssh", () => {
  it("kills an ssh that outlives its time limit, and fails with connect when the program is missing", async () => {
    const started = Date.now();
    const marker = join(dir, "still-running");
    const error = await sshFailure(runSsh(ssh(), `sleep 2; touch '${marker}'`, undefined, 300));
    expect(error.code).toBe("remote");
    expect(Date.now() - started).toBeLessThan(1900);
    // Killed: the shell never gets to the touch.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(() => statSync(marker)).toThrow();
    const missing = { ...ssh(), program: join(dir, "no-such-ssh") };
    expect((await sshFailure(runSsh(missing, "true", undefined, 5000))).code).toBe("connect");
  });

  it("gives the input callback the process's stdin", async () => {
    const output = await runSsh(ssh(), "cat", (stdin) => stdin.end("typed in"), 5000);
    expect(output).toEqual({ stdout: "typed in", stderr: "", code: 0 });
  });

  it("spawnOverOpenssh starts the command with the given environment and piped stdio", async () => {
    const child = spawnOverOpenssh(
      ssh({ OUTPOST_FAKE_VAR: "agent env" }),
      'read line; printf "%s|%s" "$line" "$OUTPOST_FAKE_VAR"',
    );
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stdin.end("hello\n");
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(Buffer.concat(chunks).toString()).toBe("hello|agent env");
  });
});

describe("connectSsh over openssh to a target only ssh can reach", () => {
  it("leaves the host key to OpenSSH when ssh2 cannot connect to scan it (e.g. behind a ProxyCommand)", async () => {
    // The stand-in "reaches" the target by running everything here, in a home of its own, while ssh2's scan of
    // the target's address is refused.
    const home = mkdtempSync(join(dir, "home-"));
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const result = await connectSsh(`127.0.0.1:${await freePort()}`, {
        transport: "openssh",
        sshProgram: program,
        configFile: false,
        knownHostsFile: join(dir, "known_hosts"),
        trustedKnownHostsFiles: [],
        agent: false,
      });
      const env = getOrThrow(result);
      try {
        expect(await output(env, 'printf %s "$HOME"')).toBe(home);
        expect(env.connection.deployed()?.path).toMatch(new RegExp(`^${home}/\\.outpost/bin/outpost-[0-9a-f]{64}$`));
      } finally {
        await env.close();
      }
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
    }
  });
});
