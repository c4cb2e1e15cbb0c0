/**
 * Random operation sequences across a cut link (spec/semantics.md AL7), over SSH (`connectSsh`, ssh2) on the rig at
 * `wan`: the property tests' generator (properties/ops.ts, every `FileSystem` method, readers and `exec`), each
 * sequence with the link cut (iptables DROP in the server namespace) once mid-sequence, shortly after an operation
 * started, and restored later — a short cut (below the silence limits: calls are only delayed) or a long one
 * (beyond both sides' silence limits: calls in flight and made meanwhile are lost).
 *
 * The sequence runs in lockstep on SSH and on the reference (`NodeExecutionEnv` on this machine, in a root of its
 * own). Each call on the SSH env is observed (a wrapper records how long it took and whether it failed as a lost
 * connection). An operation whose calls were all answered must give exactly the reference's result, and afterwards
 * the two roots must hold the same tree (names, kinds, sizes, contents, link targets): a write reported ok whose
 * bytes are not all on the target is a false success. An operation with a lost call has an unknown outcome: the
 * reference then takes the SSH root's tree as it is before the next operation (and both drop their readers: the
 * SSH ones belonged to the lost agent). Counted and printed: hangs (calls that outlived the bound, AL5), false
 * successes, processes left on the target after the agent's silence limit (long cuts), and other differences.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUNG, withDeadline } from "../../../properties/harness.js";
import { withoutMessages } from "../../../properties/normalize.js";
import {
  closeAll,
  describeOp,
  newState,
  type Op,
  runOp,
  type SequenceState,
  sequenceArbitrary,
} from "../../../properties/ops.js";
import { FILE_PATHS } from "../../../properties/pools.js";
import { createSandbox } from "../../../properties/targets.js";
import { connectSsh, type ExecutionEnv, type SshExecutionEnv } from "../../../sdk/src/index.js";
import { isConnectionLost } from "../../../sdk/src/protocol.js";
import { AGENT_SILENCE_MS, cutLink, LOST_BOUND_MS, restoreLink, targetProcesses } from "../cut.js";
import { setProfile } from "../link.js";
import { type RigServer, startRigServer } from "../server.js";

/** A cut below both silence limits (TCP retransmits once the path is back: calls are only delayed). */
const SHORT_CUT_MS = 6_000;
/** A cut beyond both: the client gives the agent up, the agent ends itself; then the processes are counted. */
const LONG_CUT_MS = AGENT_SILENCE_MS + 5_000;
/**
 * The cuts, one per sequence: how long, and how long after the operation it meets started. At 50 ms and
 * 100 Mbit/s a write of 600 KB sends its first 512 KiB piece with the request (answered after ~90 ms) and the rest
 * after that answer: a cut 15 ms in meets the first piece on the way, one 110 ms in the second.
 */
const CUTS = [
  { ms: SHORT_CUT_MS, after: 20 },
  { ms: LONG_CUT_MS, after: 15 },
  { ms: SHORT_CUT_MS, after: 20 },
  { ms: LONG_CUT_MS, after: 110 },
];
/** The generator's seed. */
const SEED = 2727;
/** An operation may make a few calls (a reader block's `readLine ×3`, `createTempFile` then `fileInfo`). */
const OP_DEADLINE_MS = 3 * LOST_BOUND_MS;

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

/** One call on the observed env. */
interface Call {
  name: string;
  ms: number;
  lost: boolean;
}

/**
 * `target` with every method call recorded into `calls`: its duration and whether its `Result` failed as a lost
 * connection. Readers a call returns are observed the same way.
 */
function observed<T extends object>(target: T, calls: Call[]): T {
  return new Proxy(target, {
    get(object, key) {
      const value = Reflect.get(object, key, object);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const started = performance.now();
        const out: unknown = value.apply(object, args);
        if (!(out instanceof Promise)) return out;
        const record = (lost: boolean) => calls.push({ name: String(key), ms: performance.now() - started, lost });
        return out.then(
          (result: unknown) => {
            const settled = result as { ok?: boolean; value?: unknown; error?: { cause?: unknown } } | undefined;
            record(settled?.ok === false && isConnectionLost(settled.error?.cause));
            const reader = settled?.ok === true ? settled.value : undefined;
            if (
              typeof reader === "object" &&
              reader !== null &&
              typeof (reader as { close?: unknown }).close === "function"
            ) {
              return { ...settled, value: observed(reader, calls) };
            }
            return result;
          },
          (error: unknown) => {
            record(isConnectionLost(error));
            throw error;
          },
        );
      };
    },
    set(object, key, value) {
      return Reflect.set(object, key, value, object);
    },
  });
}

/** A root's tree: every entry by its path (bytes as latin1), with kind, size and content digest or link target. */
function tree(root: string): Record<string, string> {
  const entries: Record<string, string> = {};
  if (!existsSync(root)) return { ".": "missing" };
  const walk = (dir: Buffer, relative: string) => {
    for (const name of readdirSync(dir, { encoding: "buffer" })) {
      const path = Buffer.concat([dir, Buffer.from("/"), name]);
      const key = `${relative}${name.toString("latin1")}`;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) {
        entries[key] = `link -> ${readlinkSync(path, { encoding: "buffer" }).toString("latin1")}`;
      } else if (stat.isDirectory()) {
        entries[key] = "dir";
        walk(path, `${key}/`);
      } else if (stat.isFile()) {
        entries[key] =
          `file ${stat.size} ${createHash("sha256").update(readFileSync(path)).digest("hex").slice(0, 16)}`;
      } else {
        entries[key] = `other ${stat.mode.toString(8)}`;
      }
    }
  };
  if (!lstatSync(root).isDirectory()) return { ".": "not a directory" };
  walk(Buffer.from(root), "");
  return entries;
}

/** Makes `to` hold what `from` holds now (a lost call left the SSH root in a state the reference must start from). */
function copyTree(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  if (!existsSync(from)) return;
  if (!lstatSync(from).isDirectory()) {
    execFileSync("cp", ["-a", from, to]);
    return;
  }
  mkdirSync(to);
  execFileSync("cp", ["-a", `${from}/.`, to]);
}

/** For a lost write: how many of its bytes the target's file holds (a lost call's outcome is unknown). */
function landed(op: Op): string {
  if (op.kind !== "writeFile" && op.kind !== "appendFile") return "";
  try {
    return ` (the file holds ${lstatSync(join(ssh.cwd, op.path)).size} bytes)`;
  } catch {
    return " (no file)";
  }
}

/** Counts of a run. */
interface Tally {
  ops: number;
  equal: number;
  lost: number;
  hangs: string[];
  falseSuccesses: string[];
  survivors: string[];
  differences: string[];
  maxLostMs: number;
}

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
  const refRoot = sandbox.root(`ref-${index}`);
  const sshRoot = sandbox.root(`ssh-${index}`);
  const calls: Call[] = [];
  ssh.cwd = sshRoot;
  const sshState: SequenceState = newState(observed<ExecutionEnv>(ssh, calls), sshRoot, sandbox.normalizer(sshRoot));
  const refState = newState(new NodeExecutionEnv({ cwd: refRoot }), refRoot, sandbox.normalizer(refRoot));
  const messages = sandbox.normalizer(sshRoot, { messages: true });
  const at = cutIndex(ops);
  let cutter: Promise<number> | undefined;
  let diverged = false;
  const lostHere: string[] = [];
  const where = (step: number, op: Op) => `sequence ${index} step ${step + 1} ${describeOp(op)}`;
  for (const [step, op] of ops.entries()) {
    if (diverged) {
      // A lost call's outcome is unknown: the reference goes on from the SSH root as it is, without readers.
      await withDeadline(closeAll(sshState), LOST_BOUND_MS);
      await closeAll(refState);
      copyTree(sshRoot, refRoot);
      diverged = false;
    }
    // Shortly after the request went out, while its answer is on the way (a round trip is 50 ms).
    if (step === at) cutter = cutFor(cut.after, cut.ms, tally);
    calls.length = 0;
    tally.ops++;
    const actual = await withDeadline(runOp(sshState, op), OP_DEADLINE_MS).catch((error: unknown) => ({
      threw: messages.value(error),
    }));
    for (const call of calls) {
      if (call.ms >= LOST_BOUND_MS) tally.hangs.push(`${where(step, op)}: ${call.name} took ${call.ms.toFixed(0)} ms`);
    }
    if (actual === HUNG) {
      tally.hangs.push(`${where(step, op)}: unsettled after ${OP_DEADLINE_MS} ms`);
      break;
    }
    if (calls.some((call) => call.lost)) {
      tally.lost++;
      lostHere.push(
        `step ${step + 1} ${describeOp(op)} after ${(Math.max(...calls.map((call) => call.ms)) / 1000).toFixed(1)} s${landed(op)}`,
      );
      for (const call of calls) if (call.lost) tally.maxLostMs = Math.max(tally.maxLostMs, call.ms);
      diverged = true;
      continue;
    }
    const expected = await runOp(refState, op).catch((error: unknown) => ({ threw: messages.value(error) }));
    if (!isDeepStrictEqual(withoutMessages(expected), withoutMessages(actual))) {
      tally.differences.push(
        `${where(step, op)}: reference ${JSON.stringify(expected)}, SSH ${JSON.stringify(messages.value(actual))}`,
      );
      diverged = true;
      continue;
    }
    const [refTree, sshTree] = [tree(refRoot), tree(sshRoot)];
    if (!isDeepStrictEqual(refTree, sshTree)) {
      const wrote = (op.kind === "writeFile" || op.kind === "appendFile") && (actual as { ok?: boolean }).ok === true;
      const report = `${where(step, op)}: reference's tree ${JSON.stringify(refTree)}, SSH's ${JSON.stringify(sshTree)}`;
      (wrote ? tally.falseSuccesses : tally.differences).push(report);
      diverged = true;
      continue;
    }
    tally.equal++;
  }
  const cutTook = cutter === undefined ? 0 : await cutter;
  await withDeadline(closeAll(sshState), LOST_BOUND_MS);
  await closeAll(refState);
  // The next call after the restore reconnects.
  ssh.cwd = sandbox.base;
  const next = await ssh.exists(sandbox.base, { abortSignal: undefined });
  if (!next.ok) tally.differences.push(`sequence ${index}: the call after the restore failed: ${next.error.message}`);
  return `sequence ${index}: ${ops.length} ops, link cut ${(cutTook / 1000).toFixed(1)} s at step ${at + 1} (${describeOp(ops[at])}); lost: ${lostHere.join("; ") || "none"}`;
}

describe("random operation sequences across a cut link", () => {
  it("every call returns the reference's result or fails as lost within the bound; no hang, no false success, no survivor", async () => {
    await setProfile("wan");
    const tally: Tally = {
      ops: 0,
      equal: 0,
      lost: 0,
      hangs: [],
      falseSuccesses: [],
      survivors: [],
      differences: [],
      maxLostMs: 0,
    };
    const sequences = pickSequences();
    const lines: string[] = [];
    const lostBefore: number[] = [];
    for (const [index, ops] of sequences.entries()) {
      lostBefore.push(tally.lost);
      lines.push(await runCutSequence(index, ops, CUTS[index], tally));
    }
    console.log(
      [
        ...lines,
        `cut sequences: ${tally.ops} ops, ${tally.equal} equal to the reference, ${tally.lost} lost (the longest lost call ${(
          tally.maxLostMs / 1000
        ).toFixed(1)} s); hangs ${tally.hangs.length}, false successes ${tally.falseSuccesses.length}, survivors ${
          tally.survivors.length
        }, other differences ${tally.differences.length}`,
      ].join("\n"),
    );
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
