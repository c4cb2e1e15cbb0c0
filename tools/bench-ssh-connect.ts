// What a connect costs over the loopback sshd fixture (spec/semantics.md SSH7), interleaved with its anchor:
// `ssh host true` (a fresh OpenSSH connection running one command), one warm `connectSsh` (agent deployed, first
// env of the process: a new connection), and N = 1, 10, 50 envs connected at once (one shared connection per
// MaxSessions = 10 envs), each closed after the round. Medians with p10/p90 in ms; the WAN rig (issue 27) runs
// the same over real latency.
// Run: node --import tsx tools/bench-ssh-connect.ts [rounds]
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { acceptHostKey, connectSsh, type SshEnvOptions } from "../sdk/src/ssh/connect.js";
import { isolateHome, startSshd } from "../sdk/test/fixtures/sshd.js";
import { median, quantile } from "./bench-harness.js";

const run = promisify(execFile);
const rounds = Number(process.argv[2] ?? 10);

const home = await isolateHome();
const sshd = await startSshd();
try {
  const options: SshEnvOptions = { ...sshd.options };
  const accepted = await acceptHostKey(sshd.target, sshd.fingerprint, options);
  if (!accepted.ok) throw accepted.error;
  const connectAll = async (count: number) => {
    const envs = await Promise.all(
      Array.from({ length: count }, async () => {
        const made = await connectSsh(sshd.target, options);
        if (!made.ok) throw made.error;
        return made.value;
      }),
    );
    return async () => {
      await Promise.all(envs.map((env) => env.close()));
    };
  };
  const sshArgs = ["-F", String(options.configFile), "-i", sshd.clientKey, "-o", "IdentitiesOnly=yes"];
  sshArgs.push("-o", `UserKnownHostsFile=${options.knownHostsFile}`, "-o", "StrictHostKeyChecking=yes");
  sshArgs.push("-o", "BatchMode=yes", "-p", String(sshd.port), sshd.target.split(":")[0], "true");
  const candidates: Record<string, () => Promise<() => Promise<void>>> = {
    "ssh host true (anchor)": async () => {
      await run("ssh", sshArgs);
      return async () => {};
    },
    "connectSsh warm, 1 env": () => connectAll(1),
    "connectSsh warm, 10 envs at once": () => connectAll(10),
    "connectSsh warm, 50 envs at once": () => connectAll(50),
  };
  // Deploys the agent once: every row is warm.
  await (await connectAll(1))();
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  for (let round = 0; round < rounds + 1; round++) {
    const names = Object.keys(candidates);
    const order = names.map((_, index) => names[(index + round) % names.length]);
    for (const name of order) {
      const started = performance.now();
      const close = await candidates[name]();
      const elapsed = performance.now() - started;
      await close();
      if (round > 0) times[name].push(elapsed); // round 0 warms everything up
    }
  }
  console.log(`connect over the loopback sshd, ${rounds} interleaved rounds (ms)`);
  const anchor = median(times["ssh host true (anchor)"]);
  for (const [name, values] of Object.entries(times)) {
    const ms = median(values);
    const spread = `p10 ${quantile(values, 0.1).toFixed(1)}, p90 ${quantile(values, 0.9).toFixed(1)}`;
    console.log(`${name.padEnd(34)} ${ms.toFixed(1).padStart(7)} (${spread})  ×${(ms / anchor).toFixed(2)} of anchor`);
  }
} finally {
  await sshd.stop();
  await rm(home, { recursive: true, force: true });
}
