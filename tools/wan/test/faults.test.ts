/**
 * Faults on a real network path (spec/semantics.md AL5): Outpost over SSH (`connectSsh`, ssh2) on the rig.
 * - `lossy` (2% loss each way): random operation sequences (the property tests' generator) give exactly the
 *   reference's trace; loss only delays.
 * - The link cut (iptables DROP in the server namespace) while writes run, then restored: every call either
 *   succeeds with its bytes fully on disk or fails as a lost connection, none outlives the bound (the client's
 *   30 s silence limit, the SSH connect timeout and a round trip), the agent cut off exits once its own silence
 *   limit passes (no process left on the target), and the next call after the restore reconnects.
 * - sshd's sessions killed: the call in flight fails as lost, the next one reconnects.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeDifference,
  firstDifference,
  newState,
  runSequence,
  sequenceArbitrary,
} from "../../../properties/ops.js";
import { createSandbox } from "../../../properties/targets.js";
import { connectSsh, type FileError, type SshExecutionEnv } from "../../../sdk/src/index.js";
import { AGENT_SILENCE_MS, cutLink, LOST_BOUND_MS, restoreLink } from "../cut.js";
import { setProfile } from "../link.js";
import { type RigServer, startRigServer } from "../server.js";

const none = { abortSignal: undefined };

const sandbox = createSandbox();
let server: RigServer;
let env: SshExecutionEnv;

beforeAll(async () => {
  server = await startRigServer({ env: { TMPDIR: sandbox.tmp } });
  const connected = await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: sandbox.base });
  if (!connected.ok) throw connected.error;
  env = connected.value;
}, 60_000);

afterAll(async () => {
  await restoreLink().catch(() => {});
  await env?.connection.close();
  await server?.stop();
  sandbox.dispose();
});

/** Whether a failed call failed as a lost connection (not as a file error that would be a wrong answer). */
function lost(error: FileError): boolean {
  const cause = error.cause as { lost?: boolean } | undefined;
  return error.code === "unknown" && (cause?.lost === true || /lost|timed out|connect|closed/i.test(error.message));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("faults on the WAN rig", () => {
  it("on lossy, random operation sequences give the reference's trace", async () => {
    await setProfile("lossy");
    const sequences = fc.sample(sequenceArbitrary(15), { seed: 27, numRuns: 12 });
    for (const [index, ops] of sequences.entries()) {
      const refRoot = sandbox.root(`ref-${index}`);
      const sshRoot = sandbox.root(`ssh-${index}`);
      const expected = await runSequence(
        newState(new NodeExecutionEnv({ cwd: refRoot }), refRoot, sandbox.normalizer(refRoot)),
        ops,
        LOST_BOUND_MS,
      );
      env.cwd = sshRoot;
      const actual = await runSequence(newState(env, sshRoot, sandbox.normalizer(sshRoot)), ops, LOST_BOUND_MS);
      expect(firstDifference(expected, actual), describeDifference(expected, actual, "SSH on lossy")).toBe(-1);
    }
  }, 300_000);

  it("with the link cut and restored, every write lands whole or fails as lost, and nothing is left behind", async () => {
    await setProfile("wan");
    const root = sandbox.root("cut");
    env.cwd = root;
    const agent = (await env.connection.info()).pid;
    const guardian = Number(readFileSync(`/proc/${agent}/stat`, "utf8").split(") ")[1].split(" ")[1]);
    expect(alive(agent)).toBe(true);
    const content = (index: number) => Buffer.alloc((index % 3) * 1024 * 1024 + 1000, index + 1);
    const outcomes: { index: number; ok: boolean; ms: number; lostFailure: boolean }[] = [];
    // Writes one after another until the link is back, so that one is always in flight when it is cut.
    let restored = false;
    const writer = (async () => {
      for (let index = 0; !restored && index < 1000; index++) {
        const started = performance.now();
        const result = await env.writeFile(`f${index}`, content(index), { abortSignal: new AbortController().signal });
        outcomes.push({
          index,
          ok: result.ok,
          ms: performance.now() - started,
          lostFailure: !result.ok && lost(result.error),
        });
      }
    })();
    await new Promise((done) => setTimeout(done, 1500));
    await cutLink(true);
    // Long enough for the agent's silence limit to end it on the target.
    await new Promise((done) => setTimeout(done, AGENT_SILENCE_MS));
    const survivors = [agent, guardian].filter(alive);
    await cutLink(false);
    restored = true;
    await writer;
    expect(survivors).toEqual([]);
    for (const outcome of outcomes) {
      expect(outcome.ms).toBeLessThan(LOST_BOUND_MS);
      if (outcome.ok) {
        // No false success: the bytes are all there (the server's files are on this machine's file system).
        expect(readFileSync(join(root, `f${outcome.index}`)).equals(content(outcome.index))).toBe(true);
      } else {
        expect(outcome.lostFailure).toBe(true);
      }
    }
    expect(outcomes.some((outcome) => !outcome.ok)).toBe(true);
    // The next call reconnects.
    const after = await env.writeFile("after", "reconnected", none);
    expect(after.ok).toBe(true);
    expect(readFileSync(join(root, "after"), "utf8")).toBe("reconnected");
    console.log(
      `link cut: ${outcomes.map((o) => `f${o.index} ${o.ok ? "ok" : "lost"} ${(o.ms / 1000).toFixed(1)}s`).join(", ")}`,
    );
  }, 180_000);

  it("when sshd's sessions are killed, the call in flight fails as lost and the next one reconnects", async () => {
    const root = sandbox.root("kill");
    env.cwd = root;
    expect((await env.exists(".", none)).ok).toBe(true);
    const running = env.exec("sleep 30", undefined, none);
    await new Promise((done) => setTimeout(done, 500));
    for (const pid of await server.sshd.sessions()) process.kill(pid, "SIGKILL");
    const result = await running;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(/lost|closed|connection/i);
    const next = await env.writeFile("next", "x", none);
    expect(next.ok).toBe(true);
  }, 120_000);
});
