/**
 * The system OpenSSH client as the transport (`transport: "openssh"`), for setups `ssh2` cannot serve (hardware
 * keys, ControlMaster, ProxyCommand): the same detection, deployment and launch, run as `ssh … host command` with
 * strict host-key checking against the same known-hosts files.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { SshError } from "./errors.js";
import type { RemoteAccess } from "./remote-access.js";
import { type RemoteOutput, shellQuote } from "./remote-command.js";
import { expandHome, parseTarget, type Route, type SshTargetOptions } from "./target.js";

/** A path inside an `-o` option: double-quoted, `%` doubled (OpenSSH expands `%` tokens in file options). */
function optionPath(path: string): string {
  if (/["\u0000-\u001f]/.test(path)) throw new SshError("invalid", `Unusable path for ssh: ${JSON.stringify(path)}`);
  return `"${path.replace(/%/g, "%%")}"`;
}

/** `ssh`'s arguments up to and including the host; the remote command follows. */
export function opensshArguments(target: string, options: SshTargetOptions, route: Route): string[] {
  const parsed = parseTarget(target);
  const args: string[] = [];
  if (options.configFile !== undefined)
    args.push("-F", options.configFile === false ? "none" : expandHome(options.configFile));
  args.push("-T", "-a", "-x");
  const settings = [
    "BatchMode=yes",
    "ClearAllForwardings=yes",
    "ForwardAgent=no",
    "ForwardX11=no",
    "PermitLocalCommand=no",
    "RemoteCommand=none",
    "RequestTTY=no",
    "StrictHostKeyChecking=yes",
    `UserKnownHostsFile=${route.trustFiles.map(optionPath).join(" ")}`,
    "GlobalKnownHostsFile=none",
    "CheckHostIP=no",
  ];
  if (options.connectTimeout !== undefined) settings.push(`ConnectTimeout=${Math.ceil(options.connectTimeout)}`);
  if (options.serverAliveInterval !== undefined) settings.push(`ServerAliveInterval=${options.serverAliveInterval}`);
  if (options.serverAliveCountMax !== undefined) settings.push(`ServerAliveCountMax=${options.serverAliveCountMax}`);
  if (options.agent === false) settings.push("IdentityAgent=none");
  else if (options.agent !== undefined) settings.push(`IdentityAgent=${optionPath(expandHome(options.agent))}`);
  if (options.identityFiles !== undefined) {
    for (const file of options.identityFiles) settings.push(`IdentityFile=${optionPath(expandHome(file))}`);
    settings.push("IdentitiesOnly=yes");
  }
  if (options.proxyJump === false) settings.push("ProxyJump=none");
  else if (options.proxyJump !== undefined) settings.push(`ProxyJump=${options.proxyJump}`);
  for (const setting of settings) args.push("-o", setting);
  const user = parsed.user ?? options.user;
  const port = parsed.port ?? options.port;
  if (user !== undefined) args.push("-l", user);
  if (port !== undefined) args.push("-p", String(port));
  args.push("--", parsed.host);
  return args;
}

const COMMAND_TIMEOUT_MS = 60_000;
const UPLOAD_TIMEOUT_MS = 300_000;

/** OpenSSH's own host-key verdicts, for failures the pre-check could not see (e.g. a jump host ssh2 cannot reach). */
function failure(output: RemoteOutput, host: string): SshError {
  const stderr = output.stderr.trim();
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr)) {
    return new SshError("host_key_changed", `The host key of ${host} changed (OpenSSH): ${stderr.slice(-300)}`);
  }
  if (/Host key verification failed|host key is known/.test(stderr)) {
    return new SshError("host_key_unknown", `The host key of ${host} is not trusted (OpenSSH): ${stderr.slice(-300)}`);
  }
  return new SshError("remote", `ssh ${host} failed with exit code ${output.code}: ${stderr.slice(-300)}`);
}

function runSsh(
  program: string,
  args: readonly string[],
  command: string,
  input: ((stdin: NodeJS.WritableStream) => void) | undefined,
  timeoutMs: number,
): Promise<RemoteOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, [...args, command], { stdio: [input ? "pipe" : "ignore", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new SshError("remote", `ssh did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new SshError("connect", `Cannot run ${program}: ${error.message}`, error));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8"), code });
    });
    if (input && child.stdin) {
      child.stdin.on("error", () => {});
      input(child.stdin);
    }
  });
}

const PUT_SCRIPT =
  'set -e; umask 077; d=$1; t=$2; mkdir -p "$(dirname "$d")" "$d"; chmod 700 "$d"; cat > "$t"; chmod 755 "$t"';

/** {@link RemoteAccess} through `program` (the system `ssh`) with `args` ending in the host. */
export function opensshAccess(program: string, args: readonly string[], host: string): RemoteAccess {
  const checked = async (
    command: string,
    input?: (stdin: NodeJS.WritableStream) => void,
    timeout = COMMAND_TIMEOUT_MS,
  ) => {
    const output = await runSsh(program, args, command, input, timeout);
    // 255 is ssh's own failure (connection, authentication, host key); anything else is the remote command's.
    if (output.code === 255) throw failure(output, host);
    return output;
  };
  return {
    run: (command) => checked(command),
    async put(localPath, size, dir, temp, onProgress) {
      let sent = 0;
      const output = await checked(
        `sh -c ${shellQuote(PUT_SCRIPT)} outpost-put ${shellQuote(dir)} ${shellQuote(temp)}`,
        (stdin) => {
          const file = createReadStream(localPath);
          file.on("data", (chunk) => {
            sent += chunk.length;
            onProgress?.(sent, size);
          });
          file.pipe(stdin);
        },
        UPLOAD_TIMEOUT_MS,
      );
      if (output.code !== 0)
        throw new SshError("deploy", `Cannot upload the agent to ${temp}: ${output.stderr.trim()}`);
    },
    async rename(from, to) {
      const output = await checked(`mv -f -- ${shellQuote(from)} ${shellQuote(to)}`);
      if (output.code !== 0) throw new SshError("deploy", `Cannot move the agent to ${to}: ${output.stderr.trim()}`);
    },
    async remove(path) {
      await checked(`rm -f -- ${shellQuote(path)}`);
    },
  };
}

/** Starts `command` on the remote with its stdio connected to this process: the agent's session. */
export function spawnOverOpenssh(
  program: string,
  args: readonly string[],
  command: string,
): ChildProcessWithoutNullStreams {
  return spawn(program, [...args, command], { stdio: "pipe" });
}
