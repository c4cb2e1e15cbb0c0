/**
 * The container engines as command lines: which program, the argv of `exec -i` (stdin attached, no TTY, so the
 * pipe is binary-clean) and of the copy commands, running a bootstrap command and telling from its stderr whether
 * the container is missing or stopped. Podman and Docker share one CLI contract; `kubectl exec` has its own forms
 * (`kubectl exec -i POD [-c CONTAINER] -- COMMAND…`, `kubectl cp SRC POD:DEST [-c CONTAINER]`).
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ContainerError } from "./errors.js";

/** The engines Outpost drives. */
export type EngineKind = "podman" | "docker" | "kubectl";

/** One container as the engine addresses it, with how commands run in it. */
export interface EngineTarget {
  kind: EngineKind;
  /** The engine's program: a name found on the PATH or a path. */
  program: string;
  /** Global flags before the subcommand (`--root …`, `--context …`, `-n namespace`). */
  engineArgs: readonly string[];
  /** Podman/Docker: the container's name or id. kubectl: the pod. */
  container: string;
  /** kubectl: the container in the pod (`-c`), if not the pod's default. */
  podContainer?: string;
  /** Podman/Docker `--user` of every command. */
  user?: string;
  /** Podman/Docker `--workdir` of the agent. */
  workdir?: string;
  /** Variables of every command run in the container (the agent's, and the bootstrap's, which see its HOME). */
  env?: Record<string, string>;
}

/** Whether `program` names an executable: a path, or a name in a PATH directory. */
function isExecutable(program: string): boolean {
  const candidates =
    isAbsolute(program) || program.includes("/")
      ? [program]
      : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir === "" ? "." : dir, program));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The engine to use: the one asked for, or for `auto` the first of `podman`, `docker` on the PATH. */
export function resolveEngine(asked: EngineKind | "auto"): EngineKind {
  const candidates: EngineKind[] = asked === "auto" ? ["podman", "docker"] : [asked];
  const found = candidates.find(isExecutable);
  if (found === undefined) {
    throw new ContainerError(
      "engine_missing",
      asked === "auto" ? "Neither podman nor docker is on the PATH" : `${asked} is not on the PATH`,
    );
  }
  return found;
}

/**
 * The argv that runs `command` in the container with stdin attached and no TTY, with the target's `env` (kubectl,
 * which has no `--env`, through `env NAME=VALUE…` in the container) and, for the agent, its `workdir`.
 */
export function execArgv(
  target: EngineTarget,
  command: readonly string[],
  options: { workdir?: boolean } = {},
): string[] {
  const env = Object.entries(target.env ?? {}).map(([name, value]) => `${name}=${value}`);
  if (target.kind === "kubectl") {
    const pod = target.podContainer === undefined ? [target.container] : [target.container, "-c", target.podContainer];
    const withEnv = env.length === 0 ? command : ["env", ...env, ...command];
    return [target.program, ...target.engineArgs, "exec", "-i", ...pod, "--", ...withEnv];
  }
  const flags = ["exec", "-i"];
  if (target.user !== undefined) flags.push("--user", target.user);
  if (options.workdir === true && target.workdir !== undefined) flags.push("--workdir", target.workdir);
  for (const pair of env) flags.push("--env", pair);
  return [target.program, ...target.engineArgs, ...flags, target.container, ...command];
}

/**
 * The argv that copies into the container. Podman/Docker: a tar archive on stdin extracted at `/` (`cp - C:/`).
 * kubectl: the local file `source` to `dest` in the pod (`kubectl cp` needs `tar` inside the container).
 */
export function copyInArgv(target: EngineTarget, source: string, dest: string): string[] {
  if (target.kind === "kubectl") {
    const container = target.podContainer === undefined ? [] : ["-c", target.podContainer];
    return [target.program, ...target.engineArgs, "cp", source, `${target.container}:${dest}`, ...container];
  }
  return [target.program, ...target.engineArgs, "cp", "-", `${target.container}:/`];
}

/** Podman/Docker: the argv that writes a tar archive of the container's file `path` to stdout. */
export function copyOutArgv(target: EngineTarget, path: string): string[] {
  return [target.program, ...target.engineArgs, "cp", `${target.container}:${path}`, "-"];
}

/** Podman/Docker: the argv that prints the engine's `os/arch` (the kernel every container of it runs on). */
export function hostPlatformArgv(target: EngineTarget): string[] {
  const format = target.kind === "docker" ? "{{.Server.Os}}/{{.Server.Arch}}" : "{{.Host.OS}}/{{.Host.Arch}}";
  return [target.program, ...target.engineArgs, target.kind === "docker" ? "version" : "info", "--format", format];
}

/** What a finished engine command printed and how it exited (`code` is null when killed by a signal). */
export interface EngineOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

const COMMAND_TIMEOUT_MS = 60_000;
const MAX_OUTPUT = 512 * 1024 * 1024;

/** Runs an engine command to its end, `input` on its stdin. Rejects only if it cannot be started at all. */
export function runEngine(argv: readonly string[], input?: Uint8Array): Promise<EngineOutput> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      argv[0],
      argv.slice(1),
      { encoding: "buffer", maxBuffer: MAX_OUTPUT, timeout: COMMAND_TIMEOUT_MS, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const spawnFailed = error !== null && typeof (error as NodeJS.ErrnoException).code === "string";
        if (spawnFailed && (error as NodeJS.ErrnoException).code === "ENOENT") {
          reject(new ContainerError("engine_missing", `${argv[0]} is not on the PATH`, error));
          return;
        }
        if (spawnFailed) {
          reject(new ContainerError("engine", `${describe(argv)} failed: ${error.message}`, error));
          return;
        }
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr: stderr.toString("utf8") });
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(input === undefined ? undefined : Buffer.from(input.buffer, input.byteOffset, input.length));
  });
}

/** A command line for messages: the engine's argv, long arguments (scripts) shortened. */
export function describe(argv: readonly string[]): string {
  return argv.map((arg) => (arg.length > 40 ? `${arg.slice(0, 37)}...` : arg)).join(" ");
}

const NOT_FOUND = [
  /no such container/i,
  /no container with name or id/i,
  /pods? "[^"]*" not found/i,
  /container not found/i,
  /error from server \(notfound\)/i,
];
const NOT_RUNNING = [
  /container state improper/i,
  /is not running/i,
  /is paused/i,
  /cannot exec (into|in) a container in a completed pod/i,
  /container .* is not (running|valid)/i,
];
/** The OCI runtime could not find or run the program: the container lacks it (exit 126/127 or 255). */
const NO_PROGRAM = /executable file not found|no such file or directory|not found in \$PATH/i;

/** Whether a failed command's stderr says the container lacks the program it was asked to run. */
export function lacksProgram(output: EngineOutput): boolean {
  return output.code !== 0 && NO_PROGRAM.test(output.stderr) && classify(output.stderr) === undefined;
}

/** The container's state as a failed engine command's stderr tells it, if it does. */
export function classify(stderr: string): "container_not_found" | "container_not_running" | undefined {
  if (NOT_FOUND.some((pattern) => pattern.test(stderr))) return "container_not_found";
  if (NOT_RUNNING.some((pattern) => pattern.test(stderr))) return "container_not_running";
  return undefined;
}

/** The error of a failed engine command: its container state if stderr tells one, else `fallback`; names both. */
export function commandError(
  argv: readonly string[],
  output: EngineOutput,
  fallback: "platform" | "deploy" | "engine",
  what: string,
): ContainerError {
  const stderr = output.stderr.trim().slice(-1000);
  const how = output.code === null ? "was killed" : `exited with ${output.code}`;
  const detail = `${what}: \`${describe(argv)}\` ${how}${stderr === "" ? "" : `: ${stderr}`}`;
  return new ContainerError(classify(stderr) ?? fallback, detail);
}
