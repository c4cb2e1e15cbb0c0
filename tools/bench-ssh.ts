// The SSH side of `make bench`: a loopback OpenSSH sshd (the SSH tests' fixture), Outpost over it through both
// transports (`connectSsh` over ssh2, and the system `ssh` client), and what users would pick instead, as anchors
// of the same rows: ssh2's SFTP on one connection, an exec channel on that connection, a fresh `ssh host true`, and a
// raw echo through `cat` on an ssh2 channel and through `ssh -T host cat` (the transport floors).
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Client, ClientChannel, SFTPWrapper } from "ssh2";
import { openRoute } from "../sdk/src/ssh/client.js";
import { acceptHostKey, connectSsh, type SshExecutionEnv } from "../sdk/src/ssh/connect.js";
import { resolveRoute } from "../sdk/src/ssh/target.js";
import { isolateHome, startSshd } from "../sdk/test/fixtures/sshd.js";
import { type Echo, echoThrough } from "./bench-echo.js";

const run = promisify(execFile);
const context = { abortSignal: undefined };

/** Outpost's SSH transports. */
export type Transport = "ssh2" | "openssh";

/** Everything the SSH candidates and anchors of the table need, and how to tear it down. */
export interface SshSide {
  /** A connected env per transport, each in its own directory. */
  envs: { name: Transport; env: SshExecutionEnv; root: string }[];
  /** ssh2's SFTP on one connection. */
  sftp: SFTPWrapper;
  /** `true` on an exec channel of that connection. */
  execChannelTrue(): Promise<void>;
  /** A fresh `ssh host true` (connect, authenticate, run, disconnect). */
  sshTrue(): Promise<void>;
  /** The `ssh` client's arguments up to and including the host: `ssh ...sshArgs <command>` runs on the server. */
  sshArgs: readonly string[];
  /** Runs a shell command on an exec channel of the open ssh2 connection; resolves with the lines it printed. */
  execChannelCountLines(command: string): Promise<number>;
  /** Echoes through `cat` on an ssh2 channel and through `ssh -T host cat`. */
  ssh2Echo: Echo;
  opensshEcho: Echo;
  /**
   * A new env over `transport` on a connection of its own (options no open env shares: connectSsh shares one
   * connection between envs with the same options); the caller closes it.
   */
  connect(transport: Transport): Promise<SshExecutionEnv>;
  /** A new ssh2 env on the connection the open ssh2 env already has (SSH7); the caller closes it. */
  connectShared(): Promise<SshExecutionEnv>;
  /** Removes the deployed agent, so the next connection uploads it again (a cold start). */
  forgetDeployment(): Promise<void>;
  close(): Promise<void>;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) throw result.error;
  return result.value;
}

function sftpOf(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
}

function execOn(client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) =>
    client.exec(command, (error, channel) => (error ? reject(error) : resolve(channel))),
  );
}

async function execCountLines(client: Client, command: string): Promise<number> {
  const channel = await execOn(client, command);
  return new Promise((resolve, reject) => {
    let lines = 0;
    let status: number | undefined;
    channel.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    });
    channel.stderr.resume();
    channel.on("exit", (code: number | null) => (status = code ?? undefined));
    channel.on("close", () =>
      status === 0 ? resolve(lines) : reject(new Error(`${command} exited with ${status ?? "a signal"}`)),
    );
  });
}

async function execTrue(client: Client): Promise<void> {
  const channel = await execOn(client, "true");
  await new Promise<void>((resolve) => {
    channel.on("close", () => resolve());
    channel.resume();
  });
}

/** Why the SSH side cannot run here, or undefined. */
export function sshUnavailable(): string | undefined {
  if (!existsSync("/usr/sbin/sshd")) return "no /usr/sbin/sshd (apt-get install openssh-server)";
  return undefined;
}

/** Starts the server and opens every connection; `root` is an empty scratch directory, `echoSize` the echo size. */
export async function startSshSide(root: string, echoSize: number): Promise<SshSide> {
  const home = await isolateHome();
  const sshd = await startSshd();
  const cleanups: (() => Promise<unknown> | unknown)[] = [
    () => rm(home, { recursive: true, force: true }),
    () => sshd.stop(),
  ];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    must(await acceptHostKey(sshd.target, sshd.fingerprint, sshd.options));
    const connect = async (transport: Transport, cwd?: string) =>
      must(await connectSsh(sshd.target, { ...sshd.options, transport, cwd }));
    // Trusts the same key from another file: envs with these options never share the open envs' connection.
    const ownOptions = { ...sshd.options, knownHostsFile: join(root, "known_hosts-own-connection") };
    must(await acceptHostKey(sshd.target, sshd.fingerprint, ownOptions));
    const envs: SshSide["envs"] = [];
    for (const name of ["ssh2", "openssh"] as const) {
      const envRoot = join(root, name);
      await mkdir(envRoot);
      const env = await connect(name, envRoot);
      cleanups.push(() => env.close());
      must(await env.fileInfo(".", context));
      envs.push({ name, env, root: envRoot });
    }
    const route = await openRoute(await resolveRoute(sshd.target, sshd.options), sshd.options, { kind: "verify" });
    cleanups.push(() => route.close());
    const sftp = await sftpOf(route.client);
    cleanups.push(() => sftp.end());
    const sshArgs = [
      "-F",
      sshd.options.configFile as string,
      "-o",
      "BatchMode=yes",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${sshd.options.knownHostsFile}`,
      "-o",
      "IdentitiesOnly=yes",
      "-i",
      sshd.clientKey,
      "-p",
      String(sshd.port),
      sshd.target.split(":")[0],
    ];
    const catChannel = await execOn(route.client, "cat");
    cleanups.push(() => catChannel.end());
    const catProcess = spawn("ssh", ["-T", ...sshArgs, "cat"], { stdio: ["pipe", "pipe", "ignore"] });
    cleanups.push(() => catProcess.kill());
    return {
      envs,
      sftp,
      execChannelTrue: () => execTrue(route.client),
      sshTrue: async () => {
        await run("ssh", [...sshArgs, "true"]);
      },
      sshArgs,
      execChannelCountLines: (command) => execCountLines(route.client, command),
      ssh2Echo: echoThrough(catChannel, catChannel, echoSize),
      opensshEcho: echoThrough(catProcess.stdin, catProcess.stdout, echoSize),
      connect: async (transport) => must(await connectSsh(sshd.target, { ...ownOptions, transport })),
      connectShared: () => connect("ssh2"),
      forgetDeployment: () => rm(join(sshd.home, ".outpost"), { recursive: true, force: true }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
