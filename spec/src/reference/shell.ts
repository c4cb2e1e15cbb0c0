/**
 * Shell selection and process-tree kill of the reference env (Durable's `NodeExecutionEnv` rules).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { access } from "node:fs/promises";
import { join, win32 } from "node:path";
import { ExecutionError } from "./errors.js";
import { err, ok, type Result } from "./result.js";

const onWindows = process.platform === "win32";

/** How long `which bash` / `where bash.exe` may run before it is killed. */
export const SHELL_LOOKUP_TIMEOUT_MS = 5000;

/** The program that runs a string command, its arguments before the command, and how the command is passed. */
export interface ShellLaunch {
  shell: string;
  args: string[];
  /** Legacy WSL `bash.exe`: run with `-s` and receive the command on stdin instead of after `-c`. */
  stdinTransport: boolean;
}

/**
 * Kills a command's process tree: POSIX signals the whole process group (`-pid`) with SIGKILL and falls back to
 * the pid alone when the group is gone; Windows runs `taskkill /F /T`. Best effort: every failure is ignored.
 */
export function killProcessTree(pid: number): void {
  if (onWindows) {
    const systemRoot = process.env.SystemRoot || "C:\\Windows";
    try {
      const killer = spawn(join(systemRoot, "System32", "taskkill.exe"), ["/F", "/T", "/PID", String(pid)], {
        detached: true,
        stdio: "ignore",
        windowsHide: true,
      });
      killer.on("error", () => {});
      killer.unref();
    } catch {
      // Best effort.
    }
    return;
  }
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/**
 * True for the legacy WSL launcher (`<SystemRoot>\System32\bash.exe` or `…\Sysnative\bash.exe`), which takes
 * the script on stdin. Applied on every platform, to the literal path string.
 */
export function isLegacyWslBashPath(path: string): boolean {
  const candidate = win32.normalize(path).toLowerCase();
  const systemRoot = process.env.SystemRoot;
  if (systemRoot) {
    if (!/^[a-zA-Z]:[\\/]/.test(systemRoot)) return false;
    const root = win32.normalize(systemRoot).toLowerCase();
    return (
      candidate === win32.join(root, "system32", "bash.exe") || candidate === win32.join(root, "sysnative", "bash.exe")
    );
  }
  return /^[a-z]:\\windows\\(system32|sysnative)\\bash\.exe$/.test(candidate);
}

function launch(shell: string): ShellLaunch {
  return isLegacyWslBashPath(shell)
    ? { shell, args: ["-s"], stdinTransport: true }
    : { shell, args: ["-c"], stdinTransport: false };
}

async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `which bash` (`where bash.exe` on Windows) and returns the first line of its output when it exits 0 and
 * names an existing file; killed after 5 s.
 */
function lookUpBash(): Promise<string | undefined> {
  const [program, args] = onWindows ? ["where", ["bash.exe"]] : ["which", ["bash"]];
  return new Promise((resolve) => {
    let output = "";
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(program, args, { detached: !onWindows, stdio: ["ignore", "pipe", "ignore"], windowsHide: true });
    } catch {
      resolve(undefined);
      return;
    }
    const timer = setTimeout(() => {
      if (child.pid !== undefined) killProcessTree(child.pid);
    }, SHELL_LOOKUP_TIMEOUT_MS);
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (text: string) => {
      output += text;
    });
    child.on("error", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const first = output.trim().split(/\r?\n/)[0];
      resolve(code === 0 && first && existsSync(first) ? first : undefined);
    });
  });
}

function noBashMessage(candidates: readonly string[]): string {
  return [
    "No bash shell found. Options:",
    "  1. Install Git for Windows: https://git-scm.com/download/win",
    "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)",
    "  3. Configure an explicit shellPath",
    "",
    "Searched Git Bash in:",
    ...candidates.map((candidate) => `  ${candidate}`),
  ].join("\n");
}

/** Chooses the shell for a string command; looked up again on every call (no caching). */
export async function findShell(shellPath: string | undefined): Promise<Result<ShellLaunch, ExecutionError>> {
  if (shellPath) {
    if (!(await pathExists(shellPath))) {
      return err(new ExecutionError("shell_unavailable", `Custom shell path not found: ${shellPath}`));
    }
    return ok(launch(shellPath));
  }
  if (onWindows) {
    const candidates: string[] = [];
    for (const root of [process.env.ProgramFiles, process.env["ProgramFiles(x86)"]]) {
      if (root) candidates.push(join(root, "Git", "bin", "bash.exe"));
    }
    for (const candidate of candidates) {
      if (await pathExists(candidate)) return ok(launch(candidate));
    }
    const found = await lookUpBash();
    if (found !== undefined) return ok(launch(found));
    return err(new ExecutionError("shell_unavailable", noBashMessage(candidates)));
  }
  if (await pathExists("/bin/bash")) return ok(launch("/bin/bash"));
  const found = await lookUpBash();
  if (found !== undefined) return ok(launch(found));
  // Bare `sh`, found through PATH when spawned.
  return ok({ shell: "sh", args: ["-c"], stdinTransport: false });
}
