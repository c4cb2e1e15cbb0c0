/**
 * The system `ssh` command line of the OpenSSH transport, read back by OpenSSH itself: `ssh -G` prints the settings
 * `ssh` would use without connecting. Every hop must get strict host-key checking against Outpost's trust files
 * only, no prompts, nothing forwarded, and the options the caller gave; a jump host is reached by a nested
 * `ssh -W` with the same settings. ssh.e2e.test.ts connects through it to a real sshd.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { opensshCommand } from "../src/ssh/openssh.js";
import { resolveRoute, type SshTargetOptions } from "../src/ssh/target.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "outpost-openssh-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command for `target` and what `ssh -G` makes of it: each setting's values, by lower-case name. */
async function evaluated(target: string, options: SshTargetOptions) {
  const command = opensshCommand("ssh", target, options, await resolveRoute(target, options));
  const { stdout } = await run("ssh", ["-G", ...command.args], { env: command.env });
  const settings = new Map<string, string[]>();
  for (const line of stdout.split("\n")) {
    const space = line.indexOf(" ");
    if (space <= 0) continue;
    const name = line.slice(0, space);
    settings.set(name, [...(settings.get(name) ?? []), line.slice(space + 1)]);
  }
  return { command, settings, get: (name: string) => settings.get(name)?.join("|") };
}

const trust = join(dir, "known 100% hosts");
const strict = {
  batchmode: "yes",
  clearallforwardings: "yes",
  forwardagent: "no",
  forwardx11: "no",
  permitlocalcommand: "no",
  stricthostkeychecking: "true",
  globalknownhostsfile: "none",
  checkhostip: "no",
  updatehostkeys: "false",
  requesttty: "false",
};

describe("the OpenSSH command line", () => {
  it("gives the target strict host keys against Outpost's files only, no prompts, no forwarding, and the options", async () => {
    const { get, command } = await evaluated("me@box:2222", {
      configFile: false,
      agent: false,
      knownHostsFile: join(dir, "outpost_known_hosts"),
      trustedKnownHostsFiles: [trust],
      connectTimeout: 2.5,
      serverAliveInterval: 5,
      serverAliveCountMax: 2,
      identityFiles: ["~/.ssh/k1", "/keys/k 2"],
    });
    for (const [name, value] of Object.entries(strict)) expect(get(name), name).toBe(value);
    expect(get("userknownhostsfile")).toBe(`${join(dir, "outpost_known_hosts")} ${trust}`);
    expect([get("user"), get("hostname"), get("port")]).toEqual(["me", "box", "2222"]);
    expect([get("connecttimeout"), get("serveraliveinterval"), get("serveralivecountmax")]).toEqual(["3", "5", "2"]);
    expect(get("identityagent")).toBe("none");
    expect(get("identityfile")).toBe(`${join(homedir(), ".ssh/k1")}|/keys/k 2`);
    expect(get("identitiesonly")).toBe("yes");
    expect(command.args.slice(0, 2)).toEqual(["-F", "none"]);
    expect(command.args.slice(-2)).toEqual(["--", "box"]);
    expect(command.env).toBe(process.env);
  });

  it("leaves unset options to ssh's defaults and the config, and names the agent socket given", async () => {
    const { get, command } = await evaluated("box", { configFile: false, agent: "~/agent.sock" });
    for (const [name, value] of Object.entries(strict)) expect(get(name), name).toBe(value);
    expect(get("identityagent")).toBe(join(homedir(), "agent.sock"));
    expect([get("port"), get("identitiesonly")]).toEqual(["22", "no"]);
    expect(get("connecttimeout")).toBe("none");
    expect(command.args.join(" ")).not.toMatch(/ServerAlive|ConnectTimeout|IdentityFile|IdentitiesOnly|ProxyJump/);
    expect(command.args).not.toContain("-l");
    expect(command.args).not.toContain("-p");
    // Without configFile, ssh reads the user's own config: no -F.
    const plain = opensshCommand("ssh", "box", {}, await resolveRoute("box", { configFile: false }));
    expect(plain.args[0]).not.toBe("-F");
    expect(plain.args.join(" ")).not.toContain("IdentityAgent");
  });

  it("passes the config file, switches its ProxyJump off only when asked, and never runs its RemoteCommand", async () => {
    const config = join(dir, "config");
    writeFileSync(config, "Host box\n  ProxyJump other\n  User fromconfig\n  RemoteCommand echo hijacked\n");
    const off = await evaluated("box", { configFile: config, proxyJump: false });
    expect(off.command.args.slice(0, 2)).toEqual(["-F", config]);
    expect(off.get("user")).toBe("fromconfig");
    expect(off.get("proxyjump")).toBeUndefined();
    expect(off.get("proxycommand")).toBeUndefined();
    // The agent's own command always runs: a config's RemoteCommand would replace it.
    expect(off.get("remotecommand")).toBeUndefined();
  });

  it("reaches the target through each jump host by a nested ssh -W with the same strict settings", async () => {
    const { get, command } = await evaluated("me@target:2200", {
      configFile: false,
      agent: false,
      proxyJump: "j1@first:2201,[::1]:2202",
      trustedKnownHostsFiles: [trust],
    });
    // One level of shell quoting undone: the nested ssh's words read as the outer ones do.
    const proxy = (get("proxycommand") ?? "").replaceAll("'\\''", "'");
    // The outer command reaches the target through the second jump host, which it reaches through the first.
    expect(proxy).toMatch(/^'ssh' '-F' 'none' '-T' '-a' '-x' /);
    expect(proxy).toMatch(/'-W' 'target:2200' '--' '::1'$/);
    expect(proxy).toContain("'-W' '[::1]:2202' '--' 'first'");
    expect(proxy).toContain("'ProxyCommand=none'");
    expect(proxy).toContain("'-l' 'j1' '-p' '2201'");
    for (const setting of [
      "BatchMode=yes",
      "StrictHostKeyChecking=yes",
      "GlobalKnownHostsFile=none",
      "ClearAllForwardings=yes",
      "ForwardAgent=no",
      "PermitLocalCommand=no",
      "UpdateHostKeys=no",
      "IdentityAgent=none",
    ]) {
      // Once for each of the two nested ssh commands.
      expect(proxy.split(`'${setting}'`).length - 1, setting).toBe(2);
    }
    // `%` in a trust file's name is doubled once for the target's ssh and once more per nesting level.
    expect(proxy).toContain("known 100%%%%%%%% hosts");
    expect(command.env.SHELL).toBe("/bin/sh");
    expect([get("user"), get("hostname"), get("port")]).toEqual(["me", "target", "2200"]);
  });

  it("refuses a trust file whose name ssh cannot take in an option", async () => {
    const options = { configFile: false as const, trustedKnownHostsFiles: [join(dir, 'a"b')] };
    const route = await resolveRoute("box", options);
    expect(() => opensshCommand("ssh", "box", options, route)).toThrow(expect.objectContaining({ code: "invalid" }));
    const control = { configFile: false as const, trustedKnownHostsFiles: [join(dir, "a\tb")] };
    const controlRoute = await resolveRoute("box", control);
    expect(() => opensshCommand("ssh", "box", control, controlRoute)).toThrow(
      expect.objectContaining({ code: "invalid" }),
    );
  });
});
