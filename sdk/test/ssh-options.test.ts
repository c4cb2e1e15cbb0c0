/**
 * Every SSH option is checked before anything is attempted: a malformed one fails `invalid`, naming the option,
 * from sshConnection (lazy: it returns at once) and from the calls that resolve a route (scanHostKey, acceptHostKey,
 * forgetHostKey, deployAgent), and never reaches the network. Boundary values that are valid are accepted.
 */
import { describe, expect, it } from "vitest";
import type { SshConnectOptions } from "../src/index.js";
import { acceptHostKey, deployAgent, forgetHostKey, scanHostKey, sshConnection } from "../src/index.js";

/** Options that would be wrong at run time only: nothing here may read a config file or reach a host. */
const base: SshConnectOptions = { configFile: false, agent: false, knownHostsFile: "/nonexistent/kh" };
const fn = () => undefined;

/** Malformed options, each with the option its error must name. */
const malformed: [string, unknown][] = [
  ["configFile", ""],
  ["configFile", 3],
  ["configFile", true],
  ["user", 7],
  ["user", ""],
  ["user", "-oProxyCommand=x"],
  ["user", "a b"],
  ["user", "a\u0007"],
  ["port", 0],
  ["port", 65536],
  ["port", 22.5],
  ["port", "22"],
  ["identityFiles", "~/.ssh/id"],
  ["identityFiles", [""]],
  ["identityFiles", ["ok", 5]],
  ["trustedKnownHostsFiles", "~/.ssh/known_hosts"],
  ["trustedKnownHostsFiles", [""]],
  ["agent", ""],
  ["agent", true],
  ["agent", 1],
  ["passphrase", "secret"],
  ["password", "secret"],
  ["proxyJump", ""],
  ["proxyJump", true],
  ["proxyJump", 2],
  ["connectTimeout", 0],
  ["connectTimeout", -1],
  ["connectTimeout", Number.POSITIVE_INFINITY],
  ["connectTimeout", Number.NaN],
  ["connectTimeout", "5"],
  ["serverAliveInterval", -1],
  ["serverAliveInterval", "5"],
  ["serverAliveInterval", Number.POSITIVE_INFINITY],
  ["serverAliveCountMax", 0],
  ["serverAliveCountMax", 1.5],
  ["serverAliveCountMax", "3"],
  ["knownHostsFile", ""],
  ["knownHostsFile", 1],
  ["agentBinary", ""],
  ["agentBinary", 1],
  ["onProgress", "log"],
  ["transport", "telnet"],
  ["sshProgram", ""],
  ["sshProgram", 1],
  ["onLog", "console"],
];

/** The same options at their valid boundaries. */
const valid: [string, unknown][] = [
  ["configFile", "/nonexistent/config"],
  ["user", "odd$user"],
  ["port", 1],
  ["port", 65535],
  ["identityFiles", []],
  ["identityFiles", ["~/.ssh/id_x"]],
  ["trustedKnownHostsFiles", []],
  ["agent", "/tmp/agent.sock"],
  ["passphrase", fn],
  ["password", fn],
  ["proxyJump", false],
  ["proxyJump", "none"],
  ["connectTimeout", 0.5],
  ["serverAliveInterval", 0],
  ["serverAliveCountMax", 1],
  ["agentBinary", "/opt/outpost"],
  ["onProgress", fn],
  ["transport", "ssh2"],
  ["transport", "openssh"],
  ["sshProgram", "ssh"],
  ["onLog", fn],
];

describe("SSH options", () => {
  it.each(malformed)("sshConnection refuses %s = %j, naming it", (name, value) => {
    const made = sshConnection("me@box:2222", { ...base, [name]: value });
    expect(made.ok).toBe(false);
    if (made.ok) return;
    expect(made.error.code).toBe("invalid");
    expect(made.error.message).toContain(name);
  });

  it.each(valid)("sshConnection accepts %s = %j without connecting", async (name, value) => {
    const made = sshConnection("me@box:2222", { ...base, [name]: value });
    expect(made.ok).toBe(true);
    if (made.ok) await made.value.close();
  });

  it("refuses options that are not an object, and malformed targets", () => {
    for (const options of [null, "port=22", 5]) {
      const made = sshConnection("box", options as unknown as SshConnectOptions);
      expect(made.ok ? "ok" : made.error.code).toBe("invalid");
    }
    for (const target of ["", "me@", "@box", "box:22x", "box:ssh", "box:0", "-box", "me@[::1]:70000", 5]) {
      const made = sshConnection(target as string, base);
      expect(made.ok ? "ok" : made.error.code, String(target)).toBe("invalid");
    }
  });

  it("the calls that resolve a route refuse the same options before any connection", async () => {
    const bad = { ...base, port: 0 };
    for (const result of [
      await scanHostKey("box", bad),
      await acceptHostKey("box", `SHA256:${"A".repeat(43)}`, bad),
      await forgetHostKey("box", bad),
      await deployAgent("box", bad),
    ]) {
      expect(result.ok ? "ok" : result.error.code).toBe("invalid");
    }
  });

  it("acceptHostKey refuses anything but a whole SHA256:<43 base64> fingerprint", async () => {
    const good = `SHA256:${"Ab+/".repeat(10)}xyz`;
    for (const fingerprint of [
      "MD5:00",
      `SHA256:${"A".repeat(42)}`,
      `SHA256:${"A".repeat(44)}`,
      `xSHA256:${"A".repeat(43)}`,
      `${good}\n`,
      `SHA256:${"A".repeat(42)}=`,
      5,
    ]) {
      const result = await acceptHostKey("box", fingerprint as string, base);
      expect(result.ok ? "ok" : result.error.code, String(fingerprint)).toBe("invalid");
    }
    // A well-formed one gets past the check: it fails only at the (refused) connection.
    const reached = await acceptHostKey("127.0.0.1:1", good, { ...base, connectTimeout: 2 });
    expect(reached.ok ? "ok" : reached.error.code).toBe("connect");
  });
});
