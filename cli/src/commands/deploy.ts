/**
 * `deploy`: verifies, or uploads and verifies, the agent on an SSH target, with a progress bar (bytes, rate) on a
 * terminal and plain lines when stdout is not one (cli-progress's non-TTY mode).
 */
import { deployAgent, type SshTargetOptions } from "@outpost/sdk";
import { SingleBar } from "cli-progress";
import { sshFailed } from "../exit.js";

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

/** Draws upload progress: bytes sent of the total and the mean rate since the first byte. */
class UploadProgress {
  readonly #bar: SingleBar;
  #started = 0;

  constructor() {
    const tty = process.stdout.isTTY === true;
    this.#bar = new SingleBar({
      stream: process.stdout,
      format: tty
        ? "deploy [{bar}] {percentage}% {sent} / {size} {rate}"
        : "deploy {percentage}% {sent} / {size} {rate}",
      noTTYOutput: true,
      notTTYSchedule: 1000,
      hideCursor: tty,
      // Off a terminal the final line is already printed; the bar's closing newline would only add a blank line.
      clearOnComplete: !tty,
      barsize: 30,
    });
  }

  update(sent: number, total: number): void {
    if (this.#started === 0) {
      this.#started = Date.now();
      this.#bar.start(total, 0, this.#payload(0, total));
    }
    this.#bar.update(sent, this.#payload(sent, total));
  }

  stop(): void {
    if (this.#started !== 0) this.#bar.stop();
  }

  #payload(sent: number, total: number): Record<string, string> {
    const seconds = Math.max((Date.now() - this.#started) / 1000, 0.001);
    return { sent: mib(sent), size: mib(total), rate: `${mib(sent / seconds)}/s` };
  }
}

/** Deploys the agent (or `agentBinary`) to `target` and prints where it is. */
export async function deploy(target: string, options: SshTargetOptions & { agentBinary?: string }): Promise<void> {
  const progress = new UploadProgress();
  const deployed = await deployAgent(target, { ...options, onProgress: (sent, total) => progress.update(sent, total) });
  progress.stop();
  if (!deployed.ok) throw sshFailed(`deploy ${target}`, target, deployed.error);
  const { path, sha256, uploaded } = deployed.value;
  process.stdout.write(`${uploaded ? "deployed" : "already deployed"}: ${path} (sha256 ${sha256})\n`);
}
