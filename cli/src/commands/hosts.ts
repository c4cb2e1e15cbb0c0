/** `hosts scan|accept|forget`: the SSH host-key trust of Outpost's known-hosts file, fingerprints shown. */
import { createInterface } from "node:readline/promises";
import { acceptHostKey, forgetHostKey, type SshTargetOptions, scanHostKey } from "@outpost/sdk";
import { CliFailure, sshFailed, usage } from "../exit.js";

/** Prints the key the server presents now (trusting nothing): `host keyType fingerprint`. */
export async function scan(target: string, options: SshTargetOptions): Promise<void> {
  const scanned = await scanHostKey(target, options);
  if (!scanned.ok) throw sshFailed(`hosts scan ${target}`, target, scanned.error);
  const key = scanned.value;
  process.stdout.write(`${key.host} ${key.keyType} ${key.fingerprint}\n`);
}

/**
 * Trusts the server's key if it has `fingerprint`; without one, shows the key and asks on the terminal, and refuses
 * (a usage error) when there is no terminal to ask on.
 */
export async function accept(
  target: string,
  fingerprint: string | undefined,
  options: SshTargetOptions,
): Promise<void> {
  let wanted = fingerprint;
  if (wanted === undefined) {
    if (!process.stdin.isTTY) throw usage("hosts accept: give --fingerprint SHA256:… (no terminal to confirm on)");
    const scanned = await scanHostKey(target, options);
    if (!scanned.ok) throw sshFailed(`hosts accept ${target}`, target, scanned.error);
    const key = scanned.value;
    process.stdout.write(`${key.host} presents ${key.keyType} ${key.fingerprint}\n`);
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await prompt.question("Compare it with the server's own; trust this key? [y/N] ");
    prompt.close();
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliFailure("hosts accept: not trusted", "host_key_unknown");
    wanted = key.fingerprint;
  }
  const accepted = await acceptHostKey(target, wanted, options);
  if (!accepted.ok) throw sshFailed(`hosts accept ${target}`, target, accepted.error);
  const { host, added } = accepted.value;
  process.stdout.write(`${added ? "trusted" : "already trusted"}: ${host} ${wanted}\n`);
}

/** Removes every key of the target from Outpost's known-hosts file. */
export async function forget(target: string, options: SshTargetOptions): Promise<void> {
  const forgotten = await forgetHostKey(target, options);
  if (!forgotten.ok) throw sshFailed(`hosts forget ${target}`, target, forgotten.error);
  process.stdout.write(`forgotten: ${target}\n`);
}
