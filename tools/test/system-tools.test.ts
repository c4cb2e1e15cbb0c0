import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { needTool } from "../system-tools.js";

describe("needTool", () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("finds a tool on PATH, and an absolute path", () => {
    expect(needTool("git")).toMatch(/\/git$/);
    expect(needTool("/usr/sbin/sshd")).toBe("/usr/sbin/sshd");
  });

  it("finds fd as Debian's fdfind", () => {
    const path = needTool("fd");
    expect(path).toMatch(/\/(fd|fdfind)$/);
  });

  it("names the tool and its Debian package when the tool is missing", () => {
    const empty = mkdtempSync(join(tmpdir(), "outpost-empty-path-"));
    try {
      process.env.PATH = empty;
      expect(() => needTool("rg")).toThrow("needs rg (Debian package ripgrep): run make setup");
      expect(() => needTool("fd")).toThrow("needs fd (Debian package fd-find): run make setup");
      expect(() => needTool("/usr/no-such/zsh")).toThrow("needs /usr/no-such/zsh (Debian package zsh): run make setup");
    } finally {
      rmSync(empty, { recursive: true });
    }
  });

  it("refuses a tool tools/system-deps.txt does not list", () => {
    expect(() => needTool("no-such-tool")).toThrow(/not in tools\/system-deps.txt/);
  });

  it("agrees with tools/system-deps.sh on this machine: every tool of the test group is found", () => {
    execFileSync("tools/system-deps.sh", ["--check", "test"], { stdio: "pipe" });
    for (const tool of [
      "git",
      "rg",
      "fd",
      "unshare",
      "setpriv",
      "useradd",
      "/usr/sbin/sshd",
      "ssh-keygen",
      "ssh-agent",
      "openssl",
      "ps",
      "zsh",
    ]) {
      expect(needTool(tool)).not.toBe("");
    }
  });
});
