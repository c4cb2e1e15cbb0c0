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

  /** Like remote(), also recording which probes ran: "posix", "cmd" or "powershell". */
  function recording(posix: string, windows = "", cmd = "") {
    const asked: string[] = [];
    const inner = remote(posix, windows, cmd);
    const access: RemoteAccess = {
      ...inner,
      run: (command) => {
        asked.push(
          command.startsWith("powershell") ? "powershell" : command.startsWith("echo OUTPOST-PROBE&") ? "cmd" : "posix",
        );
        return inner.run(command);
      },
    };
    return { access, asked };
  }

  it("reads the POSIX probe's four lines trimmed, with or without a final newline", async () => {
    const linux = { platform: "linux", arch: "x64", home: "/home/u", shell: "posix" };
    expect(await detectPlatformOn(remote("OUTPOST-PROBE\nLinux\nx86_64\n-\n/home/u"))).toEqual(linux);
    expect(await detectPlatformOn(remote("OUTPOST-PROBE\nLinux \t\n x86_64\nGNU/Linux \n/home/u \n"))).toEqual(linux);
  });

  it("takes a POSIX probe with a line missing or blank as no answer, and asks cmd and PowerShell", async () => {
    for (const posix of [
      "OUTPOST-PROBE\nLinux\nx86_64\n-",
      "OUTPOST-PROBE\n\nx86_64\n-\n/home/u\n",
      "OUTPOST-PROBE\nLinux\n \n-\n/home/u\n",
      "OUTPOST-PROBE\nLinux\nx86_64\n-\n \n",
    ]) {
      const { access, asked } = recording(posix);
      await expect(detectPlatformOn(access), posix).rejects.toMatchObject({
        code: "platform",
        message: expect.stringContaining("Cannot identify"),
      });
      expect(asked, posix).toEqual(["posix", "cmd", "powershell"]);
    }
  });

  it("asks PowerShell only under MINGW, MSYS or Cygwin, and takes only a Windows answer from it", async () => {
    const windows = "OUTPOST-PROBE\r\nWindows\r\nX64\r\n-\r\nC:\\Users\\u\r\n";
    const linux = recording("OUTPOST-PROBE\nLinux\nx86_64\n-\n/home/u\n", windows);
    expect(await detectPlatformOn(linux.access)).toMatchObject({ platform: "linux" });
    expect(linux.asked).toEqual(["posix"]);
    // A system whose name has MSYS inside, not at its start, is not Git Bash.
    const odd = recording("OUTPOST-PROBE\nXMSYS\nx86_64\n-\n/home/u\n", windows);
    await expect(detectPlatformOn(odd.access)).rejects.toMatchObject({ code: "platform" });
    expect(odd.asked).toEqual(["posix"]);
    for (const system of ["MINGW64_NT-10.0", "MSYS_NT-10.0", "CYGWIN_NT-10.0"]) {
      const gitBash = recording(`OUTPOST-PROBE\n${system}\nx86_64\nMsys\n/c/Users/u\n`, windows);
      expect(await detectPlatformOn(gitBash.access), system).toMatchObject({ platform: "windows", shell: "posix" });
    }
    // Git Bash without a PowerShell answer: an unsupported system, not a half-filled Windows.
    await expect(
      detectPlatformOn(remote("OUTPOST-PROBE\nMINGW64_NT-10.0\nx86_64\nMsys\n/c/Users/u\n", "no answer")),
    ).rejects.toMatchObject({ code: "platform", message: expect.stringContaining("MINGW64") });
    // PowerShell on Linux (pwsh as the login shell) answers the probe too, with another system.
    const pwshOnLinux = "OUTPOST-PROBE\nLinux\nX64\n-\n/home/u\n";
    await expect(detectPlatformOn(remote("garbled", pwshOnLinux))).rejects.toMatchObject({ code: "platform" });
  });
});
