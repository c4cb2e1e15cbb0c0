/**
 * Random operation sequences while the agent is lost (spec/semantics.md AL5, AL7), over a pipe with a 1 s silence
 * limit, so it runs in the default suite: what the WAN rig checks by cutting the link
 * (tools/wan/test/cut-sequences.test.ts), here by stopping the agent (SIGSTOP: it answers nothing, as behind a cut
 * link, and only the silence limit tells; it is let go on once the client gave it up) or killing it (SIGKILL), just
 * as an operation of the sequence starts. The sequences run in lockstep with the reference (properties/lockstep.ts):
 * every operation gives the reference's result and leaves the same tree, or fails as lost within the bound; no hang,
 * no false success; the lost agent is gone afterwards and no process of the file is left at the end.
 */

import { Connection, packagedAgent, RemoteExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markedArgv, markerEnv } from "../spec/test/processes.js";
import { describeTally, newTally, runLockstep } from "./lockstep.js";
import { describeOp, type Op, sequenceArbitrary } from "./ops.js";
import { createSandbox, processMarker } from "./targets.js";

const SILENCE_LIMIT_MS = 1_000;
/** The silence limit, a ping interval and an agent's start, with slack for a loaded machine. */
const LOST_BOUND_MS = 10_000;
const SEED = 2727;
const SEQUENCES = 8;

const sandbox = createSandbox();
let connection: Connection;
let env: RemoteExecutionEnv;

beforeAll(() => {
  connection = new Connection({
    command: markedArgv(processMarker, ["sh", "-c", 'exec "$0" "$@"', packagedAgent()]),
    pingIntervalMs: 100,
    silenceLimitMs: SILENCE_LIMIT_MS,
  });
  env = new RemoteExecutionEnv({
    connection,
    id: "outpost:lost-agent",
    cwd: sandbox.base,
    shellEnv: markerEnv(processMarker),
  });
});

afterAll(async () => {
  await connection?.close();
  const leftovers = await sandbox.leftovers();
  sandbox.dispose();
  expect(leftovers).toEqual([]);
}, 60_000);

/** The operation the fault meets: in the middle third, one that asks the agent (a write, a read or a command). */
function faultIndex(ops: readonly Op[]): number {
  const from = Math.max(1, Math.floor(ops.length / 3));
  const asks = (op: Op) => !op.aborted && ["writeFile", "appendFile", "readTextFile", "exec"].includes(op.kind);
  const found = ops.slice(from).findIndex(asks);
  return found < 0 ? Math.min(from, ops.length - 1) : from + found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

describe("random operation sequences while the agent is lost", () => {
  it("every call returns the reference's result or fails as lost within the bound; no hang, no false success, no survivor", async () => {
    const tally = newTally();
    const lines: string[] = [];
    const sequences = fc.sample(sequenceArbitrary(25), { seed: SEED, numRuns: SEQUENCES });
    for (const [index, ops] of sequences.entries()) {
      const stop = index % 2 === 0;
      const { pid } = await connection.info();
      const at = faultIndex(ops);
      const lost = await runLockstep(
        {
          sandbox,
          env,
          label: `sequence-${index}`,
          ops,
          lostBoundMs: LOST_BOUND_MS,
          faultAt: at,
          onFault: () => {
            if (stop) {
              // Stopped before the operation's request goes out: it must be lost. Let go on once given up.
              signal(pid, "SIGSTOP");
              setTimeout(() => signal(pid, "SIGCONT"), SILENCE_LIMIT_MS + 1_000);
            } else {
              // Killed while the operation runs (or just before it asks).
              setImmediate(() => signal(pid, "SIGKILL"));
            }
          },
        },
        tally,
      );
      // The lost agent ends: stopped, once let go on (its input is closed); killed, at once.
      const deadline = performance.now() + SILENCE_LIMIT_MS + 5_000;
      while (alive(pid) && performance.now() < deadline) await new Promise((done) => setTimeout(done, 50));
      if (alive(pid)) {
        tally.survivors.push(`sequence ${index}: agent ${pid}`);
        signal(pid, "SIGKILL");
      }
      if (stop && lost.length === 0) tally.differences.push(`sequence ${index}: nothing lost with the agent stopped`);
      const fault = `${stop ? "stopped" : "killed"} at step ${at + 1} (${describeOp(ops[at])})`;
      lines.push(`sequence ${index}: ${ops.length} ops, agent ${fault}; lost: ${lost.join("; ") || "none"}`);
    }
    console.log([...lines, `lost-agent sequences: ${describeTally(tally)}`].join("\n"));
    expect(tally.hangs).toEqual([]);
    expect(tally.falseSuccesses).toEqual([]);
    expect(tally.survivors).toEqual([]);
    expect(tally.differences).toEqual([]);
    expect(tally.equal).toBeGreaterThan(tally.ops / 2);
  }, 120_000);
});
