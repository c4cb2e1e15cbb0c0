/**
 * detectPlatform's reading of the probe: the marker line skips login-shell noise, systems and architectures map to
 * the `make dist` targets, and anything else fails clearly. The remote is a table of canned outputs (the real
 * probe over a real sshd is in ssh.e2e.test.ts).
 */
import { describe, expect, it } from "vitest";
import { detectPlatformOn } from "../src/ssh/platform.js";
import type { RemoteAccess } from "../src/ssh/remote-access.js";

function remote(posix: string, windows = "", cmd = ""): RemoteAccess {
  const answer = (command: string) =>
    command.startsWith("powershell") ? windows : command.startsWith("echo OUTPOST-PROBE&") ? cmd : posix;
  return {
    run: async (command) => ({ stdout: answer(command), stderr: "", code: 0 }),
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
      shell: "posix",
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
      shell: "powershell",
    });
    const gitBash = "OUTPOST-PROBE\nMINGW64_NT-10.0\nx86_64\nMsys\n/c/Users/u\n";
    expect(await detectPlatformOn(remote(gitBash, windows))).toMatchObject({
      platform: "windows",
      home: "C:\\Users\\u",
      shell: "posix",
    });
    await expect(detectPlatformOn(remote("only noise\n", "more noise"))).rejects.toMatchObject({
      code: "platform",
      message: expect.stringContaining("only noise"),
    });
  });

  // What cmd.exe prints for CMD_PROBE on Windows 10 (`ver` starts with an empty line there; Wine's prints none).
  const cmdProbe = (architecture: string, profile: string, cwd = profile) =>
    `AutoRun noise\r\nOUTPOST-PROBE\r\n\r\nMicrosoft Windows [Version 10.0.19045.3803]\r\n` +
    `PROCESSOR_ARCHITECTURE=${architecture}\r\nUSERPROFILE=${profile}\r\nOUTPOST-CWD\r\n${cwd}\r\n`;

  it("asks cmd.exe before PowerShell, reading variables as printed (a profile with % ^ & stays as it is)", async () => {
    const profile = "C:\\Users\\a b%PATH%^&c";
    expect(await detectPlatformOn(remote("'sh' is not recognized", "", cmdProbe("AMD64", profile)))).toEqual({
      platform: "windows",
      arch: "x64",
      home: profile,
      shell: "cmd",
    });
    expect(await detectPlatformOn(remote("", "", cmdProbe("ARM64", "C:\\Users\\u\\", "c:\\users\\U")))).toEqual({
      platform: "windows",
      arch: "arm64",
      home: "C:\\Users\\u",
      shell: "cmd",
    });
    await expect(detectPlatformOn(remote("", "", cmdProbe("x86", profile)))).rejects.toMatchObject({
      code: "platform",
      message: expect.stringContaining("x86"),
    });
  });

  it("refuses a Windows session that does not start in %USERPROFILE%, or a profile off a drive", async () => {
    await expect(
      detectPlatformOn(remote("", "", cmdProbe("AMD64", "C:\\Users\\u", "C:\\Windows\\system32"))),
    ).rejects.toMatchObject({ code: "platform", message: expect.stringContaining("%USERPROFILE%") });
    await expect(detectPlatformOn(remote("", "", cmdProbe("AMD64", "\\\\server\\share\\u")))).rejects.toMatchObject({
      code: "platform",
      message: expect.stringContaining("not on a drive"),
    });
  });

  it("takes cmd output without a Windows version line as no answer", async () => {
    const garbled =
      "OUTPOST-PROBE\r\nPROCESSOR_ARCHITECTURE=AMD64\r\nUSERPROFILE=C:\\Users\\u\r\nOUTPOST-CWD\r\nC:\\Users\\u\r\n";
    await expect(detectPlatformOn(remote("noise", "", garbled))).rejects.toMatchObject({ code: "platform" });
  });
});
