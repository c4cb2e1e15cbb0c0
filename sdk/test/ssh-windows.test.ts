/**
 * The cmd.exe launch line of a Windows agent: no path and no word cmd would act on (the deployment and the launch
 * over a real cmd are in tools/windows/ssh-windows.e2e.test.ts, under Wine).
 */
import { describe, expect, it } from "vitest";
import { windowsAgentPaths, windowsLaunchCommand } from "../src/ssh/windows.js";

const sha = "ab".repeat(32);

describe("Windows agent paths and launch", () => {
  it("names the agent under the profile, relative to it, and as SFTP does", () => {
    expect(windowsAgentPaths("C:\\Users\\a b%x^&y", sha)).toEqual({
      path: `C:\\Users\\a b%x^&y\\.outpost\\bin\\outpost-${sha}.exe`,
      relative: `.outpost\\bin\\outpost-${sha}.exe`,
      sftp: `/C:/Users/a b%x^&y/.outpost/bin/outpost-${sha}.exe`,
    });
  });

  it("starts the agent by its relative path after removing the session variables", () => {
    const paths = windowsAgentPaths("C:\\Users\\a b%x^&y", sha);
    expect(windowsLaunchCommand(paths, ["serve", "--token", "0f1e"], ["SSH_CLIENT", "SSH_TTY"])).toBe(
      `set SSH_CLIENT=& set SSH_TTY=& .outpost\\bin\\outpost-${sha}.exe serve --token 0f1e`,
    );
  });

  it("refuses a word cmd would interpret", () => {
    const paths = windowsAgentPaths("C:\\Users\\u", sha);
    for (const word of ["a b", "%PATH%", "x&y", "^", '"', "a|b", ""]) {
      expect(() => windowsLaunchCommand(paths, ["serve", word], [])).toThrow(/through cmd\.exe/);
    }
  });
});
