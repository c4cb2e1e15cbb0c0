/**
 * For tests that run a system tool (sshd, ssh-keygen, git, rg, fd, zsh, ...): `needTool` finds it or throws
 * "needs <tool> (Debian package <package>): run make setup", so a machine without it fails with what to do instead
 * of a skipped test or an error deep in the test ("no offered method was accepted", "fd: not found"). The packages
 * come from tools/system-deps.txt, the list `make setup` installs.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { basename, delimiter, isAbsolute, join } from "node:path";

interface TableEntry {
  group: string;
  debianPackage: string;
  /** Each tool as the table names it: alternatives (`fd|fdfind`), a name looked up on PATH or an absolute path. */
  tools: string[][];
}

function readTable(): TableEntry[] {
  const text = readFileSync(new URL("./system-deps.txt", import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const [group = "", debianPackage = "", ...tools] = line.trim().split(/\s+/);
      return { group, debianPackage, tools: tools.map((tool) => tool.split("|")) };
    });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `name` (a command on PATH, or an absolute path) is, or undefined. */
export function findExecutable(name: string): string | undefined {
  if (isAbsolute(name)) return isExecutable(name) ? name : undefined;
  // PATH, then the sbin directories a user's PATH often lacks (Debian's useradd, iptables).
  for (const dir of [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin"]) {
    if (dir !== "" && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The table's alternatives and Debian package for `tool`, matched by name or, for a path, by its base name. */
function lookUp(tool: string): { alternatives: string[]; debianPackage: string } | undefined {
  for (const entry of readTable()) {
    for (const alternatives of entry.tools) {
      const names = [tool, basename(tool)];
      if (alternatives.some((alternative) => names.includes(alternative) || names.includes(basename(alternative)))) {
        return { alternatives: isAbsolute(tool) ? [tool] : alternatives, debianPackage: entry.debianPackage };
      }
    }
  }
  return undefined;
}

/**
 * The path of `tool` (a command name, e.g. "rg" or "fd", which also finds Debian's `fdfind`; or an absolute path
 * such as "/usr/sbin/sshd" or "/bin/zsh"). Throws, naming the tool and its Debian package, when it is missing.
 * A tool the table does not list is an error in the test: add it to tools/system-deps.txt.
 */
export function needTool(tool: string): string {
  const known = lookUp(tool);
  if (known === undefined) throw new Error(`needTool: ${tool} is not in tools/system-deps.txt; add its package there`);
  for (const alternative of known.alternatives) {
    const path = findExecutable(alternative);
    if (path !== undefined) return path;
  }
  throw new Error(`needs ${tool} (Debian package ${known.debianPackage}): run make setup`);
}
