// How the agent gets onto a POSIX target, measured (spec/semantics.md SSH6): the same file through ssh2's SFTP
// (`fastPut`, what deployment used before) and through an exec channel on the same connection (the upload script:
// its line, then the bytes, `cat > file`), interleaved, over the loopback sshd fixture.
// Run: node --import tsx tools/bench-ssh-upload.ts [rounds]
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Client, SFTPWrapper } from "ssh2";
import { packagedAgent } from "../sdk/src/env/agent-binary.js";
import { openRoute } from "../sdk/src/ssh/client.js";
import { acceptHostKey } from "../sdk/src/ssh/connect.js";
import { ssh2Access } from "../sdk/src/ssh/remote-access.js";
import { runScript } from "../sdk/src/ssh/remote-script.js";
import { resolveRoute } from "../sdk/src/ssh/target.js";
import { isolateHome, startSshd } from "../sdk/test/fixtures/sshd.js";
import { median, quantile } from "./bench-harness.js";

const rounds = Number(process.argv[2] ?? 15);
const agent = packagedAgent();
const size = (await readFile(agent)).length;

function sftpOf(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
}

const home = await isolateHome();
const sshd = await startSshd();
try {
  const accepted = await acceptHostKey(sshd.target, sshd.fingerprint, sshd.options);
  if (!accepted.ok) throw accepted.error;
  const route = await openRoute(await resolveRoute(sshd.target, sshd.options), sshd.options, { kind: "verify" });
  const remote = ssh2Access(route.client);
  const target = join(sshd.home, "upload");
  const candidates: Record<string, () => Promise<void>> = {
    "SFTP fastPut": async () => {
      const sftp = await sftpOf(route.client);
      await new Promise<void>((resolve, reject) =>
        sftp.fastPut(agent, target, (error) => (error ? reject(error) : resolve())),
      );
      sftp.end();
    },
    "exec channel, script + cat": async () => {
      const output = await runScript(remote, 'cat > "$1"', [target], { path: agent, size });
      if (output.code !== 0) throw new Error(output.stderr);
    },
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  for (let round = 0; round < rounds + 1; round++) {
    const names = Object.keys(candidates);
    for (const name of round % 2 === 0 ? names : names.reverse()) {
      await rm(target, { force: true });
      const started = performance.now();
      await candidates[name]();
      // Round 0 warms both up.
      if (round > 0) times[name].push(performance.now() - started);
    }
  }
  route.close();
  console.log(`upload of ${(size / 1048576).toFixed(1)} MiB over loopback sshd, ${rounds} interleaved rounds`);
  for (const [name, values] of Object.entries(times)) {
    const ms = median(values);
    console.log(
      `${name.padEnd(28)} median ${ms.toFixed(1)} ms (p10 ${quantile(values, 0.1).toFixed(1)}, p90 ${quantile(values, 0.9).toFixed(1)}), ${(size / 1048576 / (ms / 1000)).toFixed(0)} MiB/s`,
    );
  }
} finally {
  await sshd.stop();
  await rm(home, { recursive: true, force: true });
}
