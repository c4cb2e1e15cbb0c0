/**
 * detectPlatform's reading of the probe: the marker line skips login-shell noise, systems and architectures map to
 * the `make dist` targets, and anything else fails clearly. The remote is a table of canned outputs (the real
 * probe over a real sshd is in ssh.e2e.test.ts).
 */
import { describe, expect, it } from "vitest";
import { detectPlatformOn } from "../src/ssh/platform.js";
import type { RemoteAccess } from "../src/ssh/remote-access.js";

function remote(posix: string, windows = ""): RemoteAccess {
  return {
    run: async (command) => ({ stdout: command.startsWith("powershell") ? windows : posix, stderr: "", code: 0 }),
    put: async () => {},
    rename: async () => {},
    remove: async () => {},
  };
}

describe("detectPlatform", () => {
  it("maps uname answers to the dist targets, skipping anything before the marker", async () => {
    const probe = (system: string, machine: string, os = "-") =>
      `banner\nOUTPOST-PROBE\n${system}\n${machine}\n${os}\n/home/u\n`;
    expect(await detectPlatformOn(remote(probe("Linux", "x86_64", "GNU/Linux")))).toEqual({
      platform: "linux",
      arch: "x64",
      home: "/home/u",
    });
    expect(await detectPlatformOn(remote(probe("Linux", "aarch64", "Android")))).toMatchObject({
      platform: "android",
      arch: "arm64",
    });
    expect(await detectPlatformOn(remote(probe("Darwin", "arm64")))).toMatchObject({
      platform: "darwin",
      arch: "arm64",
    });
    await expect(detectPlatformOn(remote(probe("FreeBSD", "amd64")))).rejects.toMatchObject({ code: "platform" });
    await expect(detectPlatformOn(remote(probe("Linux", "riscv64")))).rejects.toMatchObject({
      code: "platform",
      message: expect.stringContaining("riscv64"),
    });
  });

  it("asks PowerShell when the POSIX probe is garbled or runs under Git Bash", async () => {
    const windows = "OUTPOST-PROBE\r\nWindows\r\nX64\r\n-\r\nC:\\Users\\u\r\n";
    expect(await detectPlatformOn(remote("'sh' is not recognized", windows))).toEqual({
      platform: "windows",
      arch: "x64",
      home: "C:\\Users\\u",
    });
    const gitBash = "OUTPOST-PROBE\nMINGW64_NT-10.0\nx86_64\nMsys\n/c/Users/u\n";
    expect(await detectPlatformOn(remote(gitBash, windows))).toMatchObject({
      platform: "windows",
      home: "C:\\Users\\u",
    });
    await expect(detectPlatformOn(remote("only noise\n", "more noise"))).rejects.toMatchObject({
      code: "platform",
      message: expect.stringContaining("only noise"),
    });
  });
});
