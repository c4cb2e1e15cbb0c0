/** Targets and ssh config: `user@host:port`, `Host` aliases and the directives Outpost honours. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
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
