/**
 * Random operation sequences across a cut link (spec/semantics.md AL7), over SSH (`connectSsh`, ssh2) on the rig at
 * `wan`: the property tests' generator (properties/ops.ts, every `FileSystem` method, readers and `exec`), each
 * sequence with the link cut (iptables DROP in the server namespace) once mid-sequence, shortly after an operation
 * started, and restored later — a short cut (below the silence limits: calls are only delayed) or a long one
 * (beyond both sides' silence limits: calls in flight and made meanwhile are lost). Each sequence runs in lockstep
 * with the reference (properties/lockstep.ts: every answered operation gives the reference's result and leaves the
 * same tree, a lost one restarts the reference from the target's tree). Counted and printed: hangs (calls that
 * outlived AL5's bound), false successes, processes left on the target after the agent's silence limit (long
 * cuts), and other differences.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeTally, newTally, runLockstep, type Tally } from "../../../properties/lockstep.js";
import { describeOp, type Op, sequenceArbitrary } from "../../../properties/ops.js";
import { FILE_PATHS } from "../../../properties/pools.js";
import { createSandbox } from "../../../properties/targets.js";
import { connectSsh, type SshExecutionEnv } from "../../../sdk/src/index.js";
import { AGENT_SILENCE_MS, cutLink, LOST_BOUND_MS, restoreLink, targetProcesses } from "../cut.js";
import { setProfile } from "../link.js";
import { type RigServer, startRigServer } from "../server.js";

/** A cut below both silence limits (TCP retransmits once the path is back: calls are only delayed). */
const SHORT_CUT_MS = 6_000;
/** A cut beyond both: the client gives the agent up, the agent ends itself; then the processes are counted. */
const LONG_CUT_MS = AGENT_SILENCE_MS + 5_000;
/**
 * The cuts, one per sequence: how long, and how long after the operation it meets started. At 50 ms and
 * 100 Mbit/s a write of 600 KB sends its first 512 KiB piece with the request — after an idle spell TCP's slow
 * start takes ~5 round trips for it — and the rest once that is answered: a cut 15 ms in meets the first piece on
 * the way, one 300 ms in most likely the second (the machine's load moves it; what the file holds is printed).
 */
const CUTS = [
  { ms: SHORT_CUT_MS, after: 20 },
  { ms: LONG_CUT_MS, after: 15 },
  { ms: SHORT_CUT_MS, after: 20 },
  { ms: LONG_CUT_MS, after: 300 },
];
/** The generator's seed. */
const SEED = 2727;

const sandbox = createSandbox();
let server: RigServer;
let ssh: SshExecutionEnv;

beforeAll(async () => {
  server = await startRigServer({ env: { TMPDIR: sandbox.tmp } });
  const connected = await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: sandbox.base });
  if (!connected.ok) throw connected.error;
  ssh = connected.value;
}, 60_000);

afterAll(async () => {
  await restoreLink().catch(() => {});
  await ssh?.connection.close();
  await server?.stop();
  sandbox.dispose();
}, 60_000);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Cuts the link `delayMs` from now for `durationMs`; after a long cut, once the agent's silence limit passed and
 * before the restore, records what runs on the target besides sshd.
 */
async function cutFor(delayMs: number, durationMs: number, tally: Tally): Promise<number> {
  await sleep(delayMs);
  await cutLink(true);
  const cutAt = performance.now();
  if (durationMs >= AGENT_SILENCE_MS) {
    await sleep(AGENT_SILENCE_MS);
    tally.survivors.push(...(await targetProcesses()));
  }
  await sleep(Math.max(0, durationMs - (performance.now() - cutAt)));
  await cutLink(false);
  return performance.now() - cutAt;
}

/** Whether an operation writes more than one 512 KiB piece to a path the sequences make files at. */
const bigWrite = (op: Op) =>
  (op.kind === "writeFile" || op.kind === "appendFile") &&
  op.content === "e300k" &&
  !op.aborted &&
  (FILE_PATHS as readonly string[]).includes(op.path);

/**
 * The operation a cut starts during: in the middle third, a write of several pieces if there is one, else a write
 * or a command (most is in flight then), else the third's first.
 */
function cutIndex(ops: readonly Op[]): number {
  const from = Math.max(1, Math.floor(ops.length / 3));
  const middle = ops.slice(from, Math.max(from + 1, Math.floor((2 * ops.length) / 3)));
  const found = [bigWrite, (op: Op) => ["writeFile", "appendFile", "exec"].includes(op.kind)]
    .map((wanted) => middle.findIndex(wanted))
    .find((index) => index >= 0);
  return Math.min(from + (found ?? 0), ops.length - 1);
}

/**
 * The sequences, from the generator with a fixed seed: for each long cut the next one of at least 15 operations
 * with a write of several pieces where the cut starts (so that a cut meets a write half sent), for each short cut
 * the next other one.
 */
function pickSequences(): Op[][] {
  const candidates = fc.sample(sequenceArbitrary(25), { seed: SEED, numRuns: 200 });
  const long = candidates.filter((ops) => ops.length >= 15 && bigWrite(ops[cutIndex(ops)]));
  const short = candidates.filter((ops) => !long.includes(ops));
  const picked = CUTS.map((cut) => (cut.ms >= AGENT_SILENCE_MS ? long : short).shift());
  if (picked.includes(undefined)) throw new Error(`seed ${SEED}: too few sequences with a write of several pieces`);
  return picked as Op[][];
}

/** Runs one sequence in lockstep on SSH and the reference, the link cut once; adds to `tally`. */
async function runCutSequence(
  index: number,
  ops: readonly Op[],
  cut: { ms: number; after: number },
  tally: Tally,
): Promise<string> {
  const at = cutIndex(ops);
  let cutter: Promise<number> | undefined;
  const lost = await runLockstep(
    {
      sandbox,
      env: ssh,
      label: `sequence-${index}`,
      ops,
      lostBoundMs: LOST_BOUND_MS,
      faultAt: at,
      onFault: () => {
        cutter = cutFor(cut.after, cut.ms, tally);
      },
    },
    tally,
  );
  const cutTook = cutter === undefined ? 0 : await cutter;
  // The next call after the restore reconnects.
  ssh.cwd = sandbox.base;
  const next = await ssh.exists(sandbox.base, { abortSignal: undefined });
  if (!next.ok) tally.differences.push(`sequence ${index}: the call after the restore failed: ${next.error.message}`);
  const where = `step ${at + 1} (${describeOp(ops[at])})`;
  return `sequence ${index}: ${ops.length} ops, link cut ${(cutTook / 1000).toFixed(1)} s at ${where}; lost: ${lost.join("; ") || "none"}`;
}

describe("random operation sequences across a cut link", () => {
  it("every call returns the reference's result or fails as lost within the bound; no hang, no false success, no survivor", async () => {
    await setProfile("wan");
    const tally = newTally();
    const sequences = pickSequences();
    const lines: string[] = [];
    const lostBefore: number[] = [];
    for (const [index, ops] of sequences.entries()) {
      lostBefore.push(tally.lost);
      lines.push(await runCutSequence(index, ops, CUTS[index], tally));
    }
    console.log([...lines, `cut sequences: ${describeTally(tally)}`].join("\n"));
    expect(tally.hangs).toEqual([]);
    expect(tally.falseSuccesses).toEqual([]);
    expect(tally.survivors).toEqual([]);
    expect(tally.differences).toEqual([]);
    // Not vacuous: every long cut lost calls (so the lost path was taken), and most operations were compared.
    for (const [index, cut] of CUTS.entries()) {
      const lost = (index + 1 < CUTS.length ? lostBefore[index + 1] : tally.lost) - lostBefore[index];
      if (cut.ms >= AGENT_SILENCE_MS) expect(lost, `sequence ${index}'s long cut`).toBeGreaterThan(0);
    }
    expect(tally.equal).toBeGreaterThan(tally.ops / 2);
  }, 600_000);
});
