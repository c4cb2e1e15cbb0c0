/**
 * How a hop authenticates, without a server: which methods are built from the options (agent, key files with
 * passphrases, password and keyboard-interactive), the order ssh2 is offered them in, skipping the kinds the server
 * does not offer, and the host key algorithms preferred for already trusted key types. ssh.e2e.test.ts logs in to a
 * real sshd with each method; the cases here are the ones a server does not show (a callback declining, a missing
 * key file, an agent socket from the environment).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyAuthMethod, AuthenticationType, NextAuthHandler } from "ssh2";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { needTool } from "../../tools/system-tools.js";
import { type AuthAttempt, AuthReport, authHandler, authMethods, hostKeyAlgorithms } from "../src/ssh/client.js";
import type { HostTrust } from "../src/ssh/known-hosts.js";
import type { Hop } from "../src/ssh/target.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-ssh-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keyFile(name: string, passphrase: string): string {
  const file = join(dir, name);
  execFileSync(needTool("ssh-keygen"), ["-q", "-t", "ed25519", "-N", passphrase, "-f", file]);
  return file;
}
const plainKey = keyFile("plain", "");
const lockedKey = keyFile("locked", "open sesame");

function hop(identityFiles: string[] = []): Hop {
  return {
    alias: "box",
    hostName: "10.0.0.1",
    port: 22,
    user: "me",
    knownHostsName: "box",
    identityFiles,
    connectTimeoutMs: 1000,
    keepaliveMs: 0,
    keepaliveCountMax: 3,
  };
}

const savedSock = process.env.SSH_AUTH_SOCK;
afterEach(() => {
  if (savedSock === undefined) delete process.env.SSH_AUTH_SOCK;
  else process.env.SSH_AUTH_SOCK = savedSock;
});

/** What each attempt offers itself as, and what it makes. */
/** Makes every method in turn, as the client does (one at a time, in order), so a report lists them in order. */
async function made(methods: AuthAttempt[]): Promise<[AuthenticationType, AnyAuthMethod | undefined][]> {
  const all: [AuthenticationType, AnyAuthMethod | undefined][] = [];
  for (const method of methods) all.push([method.offeredAs, await method.make()]);
  return all;
}

describe("authMethods", () => {
  it("offers the agent of the option, else of SSH_AUTH_SOCK, and none when false or empty", async () => {
    process.env.SSH_AUTH_SOCK = "/run/env.sock";
    expect(await made(authMethods(hop(), {}))).toEqual([
      ["publickey", { type: "agent", username: "me", agent: "/run/env.sock" }],
    ]);
    expect(await made(authMethods(hop(), { agent: "/run/opt.sock" }))).toEqual([
      ["publickey", { type: "agent", username: "me", agent: "/run/opt.sock" }],
    ]);
    expect(authMethods(hop(), { agent: false })).toEqual([]);
    process.env.SSH_AUTH_SOCK = "";
    expect(authMethods(hop(), {})).toEqual([]);
    delete process.env.SSH_AUTH_SOCK;
    expect(authMethods(hop(), {})).toEqual([]);
  });

  it("reads each key file when tried; a missing or unreadable one is skipped, and the report says why", async () => {
    const report = new AuthReport();
    const methods = authMethods(hop([plainKey, join(dir, "absent")]), { agent: false }, report);
    expect(methods.map((method) => method.label)).toEqual([`key ${plainKey}`, `key ${join(dir, "absent")}`]);
    const [plain, missing] = await made(methods);
    expect(plain[0]).toBe("publickey");
    expect(plain[1]).toMatchObject({ type: "publickey", username: "me", key: { type: "ssh-ed25519" } });
    expect(missing).toEqual(["publickey", undefined]);
    expect(report.skipped).toEqual([`key ${join(dir, "absent")} (cannot read: ENOENT)`]);
  });

  it("reports an encrypted key without a passphrase and a file that is no key as skipped, with why", async () => {
    const garbage = join(dir, "not-a-key");
    writeFileSync(garbage, "not a key\n");
    const report = new AuthReport();
    await made(authMethods(hop([lockedKey, garbage]), { agent: false }, report));
    await made(authMethods(hop([lockedKey]), { agent: false, passphrase: () => undefined }, report));
    expect(report.skipped).toEqual([
      `key ${lockedKey} (encrypted, and no passphrase callback)`,
      expect.stringMatching(new RegExp(`^key ${garbage} \\(not a usable private key: .+\\)$`)),
      `key ${lockedKey} (encrypted, and no passphrase given)`,
    ]);
  });

  it("asks for the passphrase of an encrypted key only, and skips the key when it is declined or wrong", async () => {
    const asked: string[] = [];
    const answer = (value: string | undefined) => (file: string) => {
      asked.push(file);
      return value;
    };
    const options = (value: string | undefined) => ({ agent: false as const, passphrase: answer(value) });
    const [locked, plain] = await made(authMethods(hop([lockedKey, plainKey]), options("open sesame")));
    expect(locked[1]).toMatchObject({ type: "publickey", key: { type: "ssh-ed25519" } });
    expect(plain[1]).toMatchObject({ type: "publickey" });
    expect(asked).toEqual([lockedKey]);
    expect((await made(authMethods(hop([lockedKey]), options(undefined))))[0][1]).toBeUndefined();
    expect((await made(authMethods(hop([lockedKey]), options("wrong"))))[0][1]).toBeUndefined();
    // Without a passphrase callback an encrypted key is skipped.
    expect((await made(authMethods(hop([lockedKey]), { agent: false })))[0][1]).toBeUndefined();
    // A file that is no key at all is skipped without asking.
    asked.length = 0;
    const garbage = join(dir, "garbage");
    writeFileSync(garbage, "not a key\n");
    expect((await made(authMethods(hop([garbage]), options("open sesame"))))[0][1]).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it("adds password and keyboard-interactive only with a password callback, asking with the hop's names", async () => {
    expect(authMethods(hop(), { agent: false })).toEqual([]);
    const requests: unknown[] = [];
    const password = (request: { user: string; host: string; prompt: string }) => {
      requests.push(request);
      return request.prompt === "Code:" ? undefined : `pw for ${request.prompt}`;
    };
    const methods = authMethods(hop(), { agent: false, password });
    expect(methods.map((method) => method.offeredAs)).toEqual(["password", "keyboard-interactive"]);
    expect(await methods[0].make()).toEqual({ type: "password", username: "me", password: "pw for Password:" });
    expect(requests).toEqual([{ user: "me", host: "box", prompt: "Password:" }]);

    const interactive = (await methods[1].make()) as AnyAuthMethod & {
      prompt: (...args: unknown[]) => void;
    };
    expect(interactive).toMatchObject({ type: "keyboard-interactive", username: "me" });
    const answers = await new Promise((finish) =>
      interactive.prompt("", "", "", [{ prompt: "Token:" }, { prompt: "Code:" }], finish),
    );
    // A declined prompt is answered with an empty string.
    expect(answers).toEqual(["pw for Token:", ""]);

    const declined = authMethods(hop(), { agent: false, password: () => undefined });
    expect(await declined[0].make()).toBeUndefined();
    const failing = authMethods(hop(), {
      agent: false,
      password: () => Promise.reject(new Error("no terminal")),
    });
    const failed = (await failing[1].make()) as AnyAuthMethod & { prompt: (...args: unknown[]) => void };
    expect(await new Promise((finish) => failed.prompt("", "", "", [{ prompt: "Token:" }], finish))).toEqual([]);
  });
});

describe("authHandler", () => {
  /** Runs the handler as ssh2 would, once per round, and returns what it chose each round. */
  async function rounds(methods: AuthAttempt[], offers: (AuthenticationType[] | null)[]): Promise<unknown[]> {
    const handler = authHandler(methods, "me");
    const chosen: unknown[] = [];
    for (const offered of offers) {
      // ssh2 passes null before the first round; its type declarations leave that out.
      const left = offered as AuthenticationType[];
      chosen.push(await new Promise((next) => handler(left, false, next as unknown as NextAuthHandler)));
    }
    return chosen;
  }
  const attempt = (
    offeredAs: AuthenticationType,
    result: AnyAuthMethod | undefined | Error,
    label = `${offeredAs} attempt`,
  ): AuthAttempt => ({
    offeredAs,
    label,
    make: async () => {
      if (result instanceof Error) throw result;
      return result;
    },
  });
  const pw = { type: "password", username: "me", password: "x" } as AnyAuthMethod;
  const key = { type: "agent", username: "me", agent: "/s" } as AnyAuthMethod;

  it("asks none first, then offers only the methods of the kinds the server still offers, in order", async () => {
    const methods = [attempt("publickey", key), attempt("password", pw)];
    expect(await rounds(methods, [null, ["password"], ["password"]])).toEqual([
      { type: "none", username: "me" },
      pw,
      false,
    ]);
  });

  it("goes past methods that make nothing or fail, and ends with false", async () => {
    const methods = [
      attempt("publickey", undefined),
      attempt("publickey", new Error("agent gone")),
      attempt("publickey", key),
      attempt("password", pw),
    ];
    expect(await rounds(methods, [null, ["publickey", "password"], ["password"], ["password"]])).toEqual([
      { type: "none", username: "me" },
      key,
      pw,
      false,
    ]);
  });

  it("reports what it offered, what it skipped and why, and what the server accepts", async () => {
    const report = new AuthReport();
    const methods = [
      attempt("publickey", undefined, "key /k/unusable"),
      attempt("publickey", new Error("agent gone"), "ssh-agent /s"),
      attempt("publickey", key, "key /k/good"),
      attempt("keyboard-interactive", pw, "keyboard-interactive"),
    ];
    const handler = authHandler(methods, "me", report);
    for (const left of [null, ["publickey"], ["publickey"]]) {
      await new Promise((next) => handler(left as AuthenticationType[], false, next as unknown as NextAuthHandler));
    }
    expect(report.offered).toEqual(["key /k/good"]);
    expect(report.describe()).toBe(
      "offered key /k/good; not offered: ssh-agent /s (failed: agent gone), " +
        "keyboard-interactive (the server does not accept keyboard-interactive); the server accepts publickey",
    );
    expect(new AuthReport().describe()).toBe("offered nothing");
  });

  it("tries every method when the server lists none, and asks none only once", async () => {
    const methods = [attempt("publickey", key)];
    expect(await rounds(methods, [null, null, null])).toEqual([{ type: "none", username: "me" }, key, false]);
  });
});

describe("hostKeyAlgorithms", () => {
  const trust = (...types: string[]): HostTrust => ({
    name: "box",
    keys: new Map(types.map((type) => [type, [Buffer.alloc(1)]])),
    revoked: [],
  });
  // ssh2's own preference, the order OpenSSH offers too.
  const defaults =
    "ssh-ed25519 ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 rsa-sha2-512 rsa-sha2-256 ssh-rsa".split(
      " ",
    );

  it("is ssh2's order without trust, and puts the trusted types' algorithms first, each once", () => {
    expect(hostKeyAlgorithms(undefined)).toEqual(defaults);
    expect(hostKeyAlgorithms(trust())).toEqual(defaults);
    expect(hostKeyAlgorithms(trust("ssh-rsa", "ecdsa-sha2-nistp384"))).toEqual([
      "rsa-sha2-512",
      "rsa-sha2-256",
      "ssh-rsa",
      "ecdsa-sha2-nistp384",
      "ssh-ed25519",
      "ecdsa-sha2-nistp256",
      "ecdsa-sha2-nistp521",
    ]);
    // A type ssh2 has no algorithm for changes nothing.
    expect(hostKeyAlgorithms(trust("ssh-dss"))).toEqual(defaults);
  });
});
