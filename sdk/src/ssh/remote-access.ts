/**
 * What the bootstrap needs from a transport — run a command through the account's shell, with input — and its
 * `ssh2` implementation (exec channels on one connection, and SFTP for Windows through cmd.exe).
 */
import { createHash } from "node:crypto";
import type { Client, SFTPWrapper } from "ssh2";
import { SshError } from "./errors.js";
import { type RemoteInput, type RemoteOutput, runRemote, whileConnected } from "./remote-command.js";
import { ssh2Call } from "./ssh2-call.js";

/** The remote operations of detection and deployment, the same for every transport. */
export interface RemoteAccess {
  /**
   * Runs `command` through the account's shell (as `ssh host command` does); `input` writes its stdin (none:
   * ended at once). `timeoutMs` defaults to the transport's limit for a short command.
   */
  run(command: string, input?: RemoteInput, timeoutMs?: number): Promise<RemoteOutput>;
  /**
   * SFTP, for Windows through cmd.exe only: a POSIX account's startup files may print into the SFTP stream (the
   * server starts its SFTP program through the account's shell), so POSIX deployment uses scripts (SSH6).
   * Transports without SFTP do not offer it.
   */
  sftp?: SftpAccess;
}

/** File operations over SFTP, so no path passes through a shell at all. */
export interface SftpAccess {
  /**
   * Creates `dir` and its parent if missing (mode 0700), restricts `dir` to 0700, and writes the local file to
   * `temp` inside it with mode 0755, reporting bytes sent.
   */
  put(
    localPath: string,
    size: number,
    dir: string,
    temp: string,
    onProgress?: (sent: number, total: number) => void,
  ): Promise<void>;
  /** Renames `from` over `to` in one step (a reader sees the old file or the new one). */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file, ignoring a missing one. */
  remove(path: string): Promise<void>;
  /**
   * The SHA-256 of a remote file computed here from its bytes read back over SFTP (no remote program is trusted),
   * `"missing"` if there is no such regular file.
   */
  sha256(path: string): Promise<string>;
}

function openSftp(client: Client): Promise<SFTPWrapper> {
  return ssh2Call<SFTPWrapper>(
    (done) => client.sftp(done),
    (error) => new SshError("deploy", `Cannot start SFTP: ${error.message}`, error),
  );
}

function sftpCall(what: string, call: (done: (error?: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    call((error) => {
      if (error) reject(new SshError("deploy", `${what}: ${error.message}`, error));
      else resolve();
    });
  });
}

async function ensureDirectory(sftp: SFTPWrapper, path: string): Promise<void> {
  try {
    await sftpCall(`Cannot create ${path}`, (done) => sftp.mkdir(path, { mode: 0o700 }, done));
  } catch (error) {
    const isDirectory = await new Promise<boolean>((resolve) =>
      sftp.stat(path, (statError, stats) => resolve(!statError && stats.isDirectory())),
    );
    if (!isDirectory) throw error;
  }
}

/** Uses SFTP (one session per call), so no path passes through a shell at all. */
async function withSftp<T>(client: Client, use: (sftp: SFTPWrapper) => Promise<T>): Promise<T> {
  const sftp = await openSftp(client);
  try {
    return await use(sftp);
  } finally {
    sftp.end();
  }
}

const NO_SUCH_FILE = 2;

/** Hashes the remote file as it streams in; a missing path or one that is not a regular file is `"missing"`. */
async function sftpSha256(sftp: SFTPWrapper, path: string): Promise<string> {
  const regular = await new Promise<boolean>((resolve, reject) =>
    sftp.stat(path, (error, stats) => {
      if (!error) resolve(stats.isFile());
      else if ((error as Error & { code?: unknown }).code === NO_SUCH_FILE) resolve(false);
      else reject(new SshError("deploy", `Cannot stat ${path}: ${error.message}`, error));
    }),
  );
  if (!regular) return "missing";
  const hash = createHash("sha256");
  await new Promise<void>((resolve, reject) => {
    const stream = sftp.createReadStream(path);
    stream.on("data", (chunk: Buffer) => hash.update(chunk));
    stream.on("error", (error: Error) =>
      reject(new SshError("deploy", `Cannot read ${path}: ${error.message}`, error)),
    );
    stream.on("end", () => resolve());
  });
  return hash.digest("hex");
}

/**
 * {@link RemoteAccess} over an open `ssh2` client; every call fails as soon as the connection drops.
 *
 * @internal ssh2's types stay out of the published declarations (stripInternal): this file's declarations are
 * reached from the public `deployAgent` types, and a host that never asked for `@types/ssh2` must compile them.
 */
export function ssh2Access(client: Client): RemoteAccess {
  return {
    run: (command, input, timeoutMs) => whileConnected(client, runRemote(client, command, input, timeoutMs)),
    sftp: ssh2Sftp(client),
  };
}

function ssh2Sftp(client: Client): SftpAccess {
  return {
    put: (localPath, _size, dir, temp, onProgress) =>
      whileConnected(
        client,
        withSftp(client, async (sftp) => {
          await ensureDirectory(sftp, dir.slice(0, dir.lastIndexOf("/")));
          await ensureDirectory(sftp, dir);
          await sftpCall(`Cannot restrict ${dir}`, (done) => sftp.chmod(dir, 0o700, done));
          await sftpCall(`Cannot upload the agent to ${temp}`, (done) =>
            sftp.fastPut(
              localPath,
              temp,
              { mode: 0o755, step: (sent, _chunk, total) => onProgress?.(sent, total) },
              done,
            ),
          );
          await sftpCall(`Cannot make ${temp} executable`, (done) => sftp.chmod(temp, 0o755, done));
        }),
      ),
    rename: (from, to) =>
      whileConnected(
        client,
        withSftp(client, (sftp) =>
          sftpCall(`Cannot move the agent to ${to}`, (done) => sftp.ext_openssh_rename(from, to, done)),
        ),
      ),
    remove: (path) =>
      whileConnected(
        client,
        withSftp(client, (sftp) => new Promise<void>((resolve) => sftp.unlink(path, () => resolve()))),
      ),
    sha256: (path) =>
      whileConnected(
        client,
        withSftp(client, (sftp) => sftpSha256(sftp, path)),
      ),
  };
}
