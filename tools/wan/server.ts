/**
 * The rig's target: Debian's sshd (the SSH tests' fixture, throwaway keys) in the server namespace, listening on
 * the server's address, reached from the client namespace through the delay line; its host key accepted into a
 * known-hosts file of its own and `HOME` isolated, as the SSH tests do.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { acceptHostKey, getOrThrow, scanHostKey } from "../../sdk/src/index.js";
import { isolateHome, type Sshd, type SshdOptions, startSshd } from "../../sdk/test/fixtures/sshd.js";
import { rig } from "./link.js";

export interface RigServer {
  sshd: Sshd;
  /** `-o` options for ssh, scp and sftp: the fixture's key, a known-hosts file with its host key, no `~/.ssh`. */
  clientOptions: string[];
  /** `ssh` arguments up to the destination: clientOptions and the port. */
  sshArgs: string[];
  /** `scp` and `sftp` arguments up to the paths: clientOptions and the port (`-P`). */
  copyArgs: string[];
  /** `user@address`, the destination for ssh, scp and sftp. */
  host: string;
  stop(): Promise<void>;
}

/** Starts sshd in the server namespace; the caller must `stop()` it. */
export async function startRigServer(options: SshdOptions = {}): Promise<RigServer> {
  const { serverNs, server } = rig();
  const home = await isolateHome();
  const sshd = await startSshd({ ...options, netns: serverNs, address: server });
  try {
    const scanned = getOrThrow(await scanHostKey(sshd.target, sshd.options));
    getOrThrow(await acceptHostKey(sshd.target, scanned.fingerprint, sshd.options));
  } catch (error) {
    await sshd.stop();
    throw error;
  }
  const knownHosts = join(sshd.dir, "anchor_known_hosts");
  await writeFile(knownHosts, `[${server}]:${sshd.port} ${sshd.hostKey}\n`);
  const clientOptions = [
    "-F",
    "/dev/null",
    "-i",
    sshd.clientKey,
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "BatchMode=yes",
    "-o",
    `UserKnownHostsFile=${knownHosts}`,
    "-o",
    "StrictHostKeyChecking=yes",
  ];
  return {
    sshd,
    clientOptions,
    sshArgs: [...clientOptions, "-p", String(sshd.port)],
    copyArgs: [...clientOptions, "-P", String(sshd.port)],
    host: `${sshd.target.split("@")[0]}@${server}`,
    async stop() {
      await sshd.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}
