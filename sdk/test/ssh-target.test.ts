/** Targets and ssh config: `user@host:port`, `Host` aliases and the directives Outpost honours. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { SshError } from "../src/ssh/errors.js";
import { parseTarget, resolveRoute } from "../src/ssh/target.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-ssh-target-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = join(dir, "config");
writeFileSync(
  config,
  [
    "Host gpu",
    "  HostName 10.1.2.3",
    "  User alice",
    "  Port 2201",
    "  IdentityFile /keys/%h-%r",
    "  IdentityFile /keys/second",
    "  ProxyJump bastion, me@hop2:2222",
    "  ServerAliveInterval 7",
    "  ConnectTimeout 4",
    "Host bastion",
    "  HostName bastion.example",
    "  HostKeyAlias bastion-key",
    "Host *",
    "  User fallback",
    "",
  ].join("\n"),
);
const base = { configFile: config, knownHostsFile: join(dir, "kh"), trustedKnownHostsFiles: [] };

describe("targets", () => {
  it("splits user@host:port, [v6]:port and bare v6 addresses", () => {
    expect(parseTarget("me@box:2222")).toEqual({ user: "me", host: "box", port: 2222 });
    expect(parseTarget("box")).toEqual({ user: undefined, host: "box", port: undefined });
    expect(parseTarget("me@[::1]:22")).toEqual({ user: "me", host: "::1", port: 22 });
    expect(parseTarget("::1")).toEqual({ user: undefined, host: "::1", port: undefined });
    expect(parseTarget("odd$user@box")).toEqual({ user: "odd$user", host: "box", port: undefined });
    for (const bad of ["", "-x", "me@", "box:", "box:99999", "a b", "me@box:x"]) {
      expect(() => parseTarget(bad), bad).toThrow(expect.objectContaining({ code: "invalid" }));
    }
  });

  it("resolves a Host alias through HostName, User, Port, IdentityFile, ProxyJump and the timeouts", async () => {
    const route = await resolveRoute("gpu", base);
    expect(route.hops.map((hop) => [hop.alias, hop.hostName, hop.user, hop.port, hop.knownHostsName])).toEqual([
      ["bastion", "bastion.example", "fallback", 22, "bastion-key"],
      ["hop2", "hop2", "me", 2222, "[hop2]:2222"],
      ["gpu", "10.1.2.3", "alice", 2201, "[10.1.2.3]:2201"],
    ]);
    const target = route.hops[2];
    expect(target.identityFiles).toEqual(["/keys/gpu-alice", "/keys/second"]);
    expect(target.keepaliveMs).toBe(7000);
    expect(target.connectTimeoutMs).toBe(4000);
    expect(route.trustFiles).toEqual([join(dir, "kh")]);
  });

  it("lets the target string and the options win over the config, and proxyJump: false drop the jumps", async () => {
    const route = await resolveRoute("bob@gpu:2300", {
      ...base,
      proxyJump: false,
      connectTimeout: 9,
      identityFiles: ["/k"],
    });
    expect(route.hops).toHaveLength(1);
    expect(route.hops[0]).toMatchObject({ user: "bob", port: 2300, connectTimeoutMs: 9000, identityFiles: ["/k"] });
    expect(
      (await resolveRoute("gpu", { ...base, port: 2400, user: "carol", proxyJump: "none" })).hops[0],
    ).toMatchObject({
      user: "carol",
      port: 2400,
    });
  });

  it("fails with config for a missing explicit config file or a bad value, invalid for bad options", async () => {
    await expect(resolveRoute("gpu", { ...base, configFile: join(dir, "missing") })).rejects.toMatchObject({
      code: "config",
    });
    const bad = join(dir, "bad");
    writeFileSync(bad, "Host x\n  Port eleven\n");
    await expect(resolveRoute("x", { ...base, configFile: bad })).rejects.toMatchObject({ code: "config" });
    await expect(resolveRoute("x", { ...base, serverAliveInterval: -1 })).rejects.toMatchObject({ code: "invalid" });
    await expect(resolveRoute("x", { ...base, user: "-oops" })).rejects.toMatchObject({ code: "invalid" });
  });
});

describe("target strings: edges", () => {
  it("takes the user up to the last @, brackets only around a whole host, a port only of plain digits", () => {
    expect(parseTarget("a@b@box")).toEqual({ user: "a@b", host: "box", port: undefined });
    expect(parseTarget("[::1]")).toEqual({ user: undefined, host: "::1", port: undefined });
    expect(parseTarget("[box]:2222")).toEqual({ user: undefined, host: "box", port: 2222 });
    const refused = ["@box", ":22", "-me@box", "a b@box", "[box", "box]", "x[::1]:22", "[::1]:22x", "[::1]:", "[]:22"];
    for (const bad of [...refused, "box: 22", "box:22 ", "box:0x16", "box:1e3", "box:+22"]) {
      expect(() => parseTarget(bad), bad).toThrow(expect.objectContaining({ code: "invalid" }));
    }
  });
});

describe("routes: defaults and the config's values", () => {
  let home: string;
  let savedHome: string | undefined;
  beforeEach(() => {
    savedHome = process.env.HOME;
    home = mkdtempSync(join(dir, "home-"));
    process.env.HOME = home;
  });
  afterEach(() => {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
  });

  it("reads ~/.ssh/config when no config file is named, and does without one when it is missing", async () => {
    const noConfig = await resolveRoute("box", {});
    expect(noConfig.hops.map((hop) => [hop.hostName, hop.port])).toEqual([["box", 22]]);
    mkdirSync(join(home, ".ssh"));
    writeFileSync(join(home, ".ssh", "config"), "Host box\n  Port 2222\n");
    expect((await resolveRoute("box", {})).hops[0].port).toBe(2222);
    // An unreadable default config is an error, as an explicit one is.
    rmSync(join(home, ".ssh", "config"));
    mkdirSync(join(home, ".ssh", "config"));
    await expect(resolveRoute("box", {})).rejects.toMatchObject({ code: "config" });
    expect((await resolveRoute("box", { configFile: false })).hops[0].port).toBe(22);
  });

  it("defaults the keys, the known_hosts file and the trust files under the home", async () => {
    const route = await resolveRoute("box", { configFile: false });
    expect(route.hops[0].identityFiles).toEqual(
      ["id_ed25519", "id_ecdsa", "id_rsa"].map((name) => join(home, ".ssh", name)),
    );
    expect(route.knownHostsFile).toBe(join(home, ".outpost", "known_hosts"));
    expect(route.trustFiles).toEqual([join(home, ".outpost", "known_hosts"), join(home, ".ssh", "known_hosts")]);
    expect((await resolveRoute("box", { configFile: false, identityFiles: [] })).hops[0].identityFiles).toEqual(
      route.hops[0].identityFiles,
    );
  });

  it("expands ~ and ~/ (nothing else) in key paths", async () => {
    const route = await resolveRoute("box", { configFile: false, identityFiles: ["~", "~/k", "x~/y", "/a/~/b", "~k"] });
    expect(route.hops[0].identityFiles).toEqual([home, join(home, "k"), "x~/y", "/a/~/b", "~k"]);
  });

  it("expands %h, %p, %r and %% in IdentityFile and HostName; keeps a single IdentityFile", async () => {
    const file = join(home, "config");
    writeFileSync(
      file,
      [
        "Host one",
        "  HostName %h.example",
        "  User u",
        "  Port 2201",
        "  IdentityFile /k/%%h-%p-%r-%h",
        "Host aliased",
        "  Port 2201",
        "  HostKeyAlias the-key",
        "",
      ].join("\n"),
    );
    const [hop] = (await resolveRoute("one", { configFile: file })).hops;
    expect(hop).toMatchObject({ hostName: "one.example", user: "u", port: 2201, identityFiles: ["/k/%h-2201-u-one"] });
    // A HostKeyAlias names the host's keys whatever its port.
    expect((await resolveRoute("aliased", { configFile: file })).hops[0].knownHostsName).toBe("the-key");
  });

  it("refuses blank or out-of-range numbers in the config; a zero ServerAliveInterval turns keepalives off", async () => {
    const file = join(home, "config");
    for (const line of ['ServerAliveInterval ""', 'ServerAliveInterval "  "', "ConnectTimeout 0", "Port 0"]) {
      writeFileSync(file, `Host box\n  ${line}\n`);
      await expect(resolveRoute("box", { configFile: file }), line).rejects.toBeInstanceOf(SshError);
    }
    writeFileSync(file, "Host box\n  ServerAliveInterval 0\n  ConnectTimeout 0.5\n");
    expect((await resolveRoute("box", { configFile: file })).hops[0]).toMatchObject({
      keepaliveMs: 0,
      connectTimeoutMs: 500,
    });
  });
});
