/**
 * The system OpenSSH client as the transport (`transport: "openssh"`), for setups `ssh2` cannot serve (hardware
 * keys, ControlMaster, ProxyCommand): the same detection, deployment and launch, run as `ssh … host command` with
 * strict host-key checking against the same known-hosts files.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { SshError } from "./errors.js";
import type { RemoteAccess } from "./remote-access.js";
import { COMMAND_TIMEOUT_MS, type RemoteInput, type RemoteOutput, shellQuote } from "./remote-command.js";
import { expandHome, type Hop, parseTarget, type Route, type SshTargetOptions } from "./target.js";

/** A path inside an `-o` option: double-quoted, `%` doubled (OpenSSH expands `%` tokens in file options). */
function optionPath(path: string): string {
  if (/["\u0000-\u001f]/.test(path)) throw new SshError("invalid", `Unusable path for ssh: ${JSON.stringify(path)}`);
  return `"${path.replace(/%/g, "%%")}"`;
}

/** How to run the system `ssh` to the target: the program, its arguments up to the host, and its environment. */
export interface OpensshCommand {
  program: string;
  /** Everything before the remote command. */
  args: string[];
  /** The environment `ssh` runs in. */
  env: NodeJS.ProcessEnv;
}

/** The settings every hop gets: strict host keys against Outpost's trust files only, nothing forwarded, no prompts. */
function hopSettings(options: SshTargetOptions, route: Route): string[] {
  const settings = [
    "BatchMode=yes",
    "ClearAllForwardings=yes",
    "ForwardAgent=no",
    "ForwardX11=no",
    "PermitLocalCommand=no",
    "StrictHostKeyChecking=yes",
    `UserKnownHostsFile=${route.trustFiles.map(optionPath).join(" ")}`,
    "GlobalKnownHostsFile=none",
    "CheckHostIP=no",
    "UpdateHostKeys=no",
  ];
  if (options.connectTimeout !== undefined) settings.push(`ConnectTimeout=${Math.ceil(options.connectTimeout)}`);
  if (options.serverAliveInterval !== undefined) settings.push(`ServerAliveInterval=${options.serverAliveInterval}`);
  if (options.serverAliveCountMax !== undefined) settings.push(`ServerAliveCountMax=${options.serverAliveCountMax}`);
  if (options.agent === false) settings.push("IdentityAgent=none");
  else if (options.agent !== undefined) settings.push(`IdentityAgent=${optionPath(expandHome(options.agent))}`);
  return settings;
}

function configArguments(options: SshTargetOptions): string[] {
  if (options.configFile === undefined) return [];
  return ["-F", options.configFile === false ? "none" : expandHome(options.configFile)];
}

/** `host:port` for `-W`, an IPv6 address in brackets. */
function forwardTarget(hop: Hop): string {
  return `${hop.hostName.includes(":") ? `[${hop.hostName}]` : hop.hostName}:${hop.port}`;
}

/**
 * The `ProxyCommand` that reaches `route.hops[index + 1]` through the jump hosts up to `index`: an `ssh -W` to the
 * next hop per jump host, each nested in the next one's `ProxyCommand`. OpenSSH's own `ProxyJump` would start
 * those `ssh`s with the user's defaults (their known hosts, `StrictHostKeyChecking`, prompts); these get the same
 * strict settings as the target. `%` is doubled once per level, for each enclosing `ssh`'s token expansion.
 */
function proxyCommand(program: string, options: SshTargetOptions, route: Route, index: number): string {
  const hop = route.hops[index];
  const args = [
    program,
    ...configArguments(options),
    "-T",
    "-a",
    "-x",
    ...hopSettings(options, route).flatMap((setting) => ["-o", setting]),
    "-o",
    index === 0 ? "ProxyCommand=none" : `ProxyCommand=${proxyCommand(program, options, route, index - 1)}`,
    "-l",
    hop.user,
    "-p",
    String(hop.port),
    "-W",
    forwardTarget(route.hops[index + 1]),
    "--",
    hop.alias,
  ];
  return args.map(shellQuote).join(" ").replace(/%/g, "%%");
}

/**
 * `ssh` to the route's target: the target's own settings as `connectSsh` resolved them, every jump host reached by
 * a {@link proxyCommand} with the same host-key checking. `SHELL` is `/bin/sh` for it, because OpenSSH runs a
 * `ProxyCommand` with the user's `$SHELL` and the command is quoted for a POSIX shell.
 */
export function opensshCommand(
  program: string,
  target: string,
  options: SshTargetOptions,
  route: Route,
): OpensshCommand {
  const parsed = parseTarget(target);
  const settings = [...hopSettings(options, route), "RemoteCommand=none", "RequestTTY=no"];
  if (options.identityFiles !== undefined) {
    for (const file of options.identityFiles) settings.push(`IdentityFile=${optionPath(expandHome(file))}`);
    settings.push("IdentitiesOnly=yes");
  }
  const jumps = route.hops.length - 1;
  // With no jump host a ProxyCommand of the config still applies (`ProxyJump=none` would switch it off too).
  if (jumps > 0) settings.push(`ProxyCommand=${proxyCommand(program, options, route, jumps - 1)}`);
  else if (options.proxyJump !== undefined) settings.push("ProxyJump=none");
  const args = [...configArguments(options), "-T", "-a", "-x", ...settings.flatMap((setting) => ["-o", setting])];
  const user = parsed.user ?? options.user;
  const port = parsed.port ?? options.port;
  if (user !== undefined) args.push("-l", user);
  if (port !== undefined) args.push("-p", String(port));
  args.push("--", parsed.host);
  return { program, args, env: jumps > 0 ? { ...process.env, SHELL: "/bin/sh" } : process.env };
}

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

/** Runs `command` on the remote through `ssh` and collects its output. */
export function runSsh(
  ssh: OpensshCommand,
  command: string,
  input: RemoteInput | undefined,
  timeoutMs: number,
): Promise<RemoteOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(ssh.program, [...ssh.args, command], {
      env: ssh.env,
      stdio: [input ? "pipe" : "ignore", "pipe", "pipe"],
    });
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
      reject(new SshError("connect", `Cannot run ${ssh.program}: ${error.message}`, error));
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

/** {@link RemoteAccess} through the system `ssh`: one `ssh` per command, no SFTP. */
export function opensshAccess(ssh: OpensshCommand, host: string): RemoteAccess {
  return {
    async run(command, input, timeoutMs = COMMAND_TIMEOUT_MS) {
      const output = await runSsh(ssh, command, input, timeoutMs);
      // 255 is ssh's own failure (connection, authentication, host key); anything else is the remote command's.
      if (output.code === 255) throw failure(output, host);
      return output;
    },
  };
}

/** Starts `command` on the remote with its stdio connected to this process: the agent's session. */
export function spawnOverOpenssh(ssh: OpensshCommand, command: string): ChildProcessWithoutNullStreams {
  return spawn(ssh.program, [...ssh.args, command], { env: ssh.env, stdio: "pipe" });
}
