/**
 * Random operation sequences in lockstep on an Outpost env and the reference while the connection fails
 * (spec/semantics.md AL5, AL7): the WAN rig cuts the link (tools/wan/test/cut-sequences.test.ts), the default suite
 * stops or kills a pipe agent (properties/lost-agent.test.ts).
 *
 * Every call on the Outpost env is observed (a wrapper records how long it took and whether it failed as a lost
 * connection). An operation whose calls were all answered must give exactly the reference's result, and afterwards
 * the two roots must hold the same tree (names, kinds, sizes, contents, link targets): a write reported ok whose
 * bytes are not all on the target is a false success. An operation with a lost call has an unknown outcome: the
 * reference then takes the Outpost root's tree as it is before the next operation, and both sides drop their
 * readers (the Outpost ones belonged to the lost agent).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ExecutionEnv } from "@outpost/sdk";
import { isConnectionLost } from "@outpost/sdk/protocol";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { HUNG, withDeadline } from "./harness.js";
import { withoutMessages } from "./normalize.js";
import { closeAll, describeOp, newState, type Op, runOp } from "./ops.js";
import type { Sandbox } from "./targets.js";

/** One call on the observed env. */
interface Call {
  name: string;
  ms: number;
  lost: boolean;
}

/**
 * `target` with every method call recorded into `calls`: its duration and whether its `Result` failed as a lost
 * connection. Readers a call returns are observed the same way. Methods run on the target itself (its private
 * fields are not reachable through a proxy).
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
            if (typeof reader === "object" && reader !== null && typeof Reflect.get(reader, "close") === "function") {
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
  if (!existsSync(root)) return { ".": "missing" };
  if (!lstatSync(root).isDirectory()) return { ".": "not a directory" };
  const entries: Record<string, string> = {};
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
        const digest = createHash("sha256").update(readFileSync(path)).digest("hex").slice(0, 16);
        entries[key] = `file ${stat.size} ${digest}`;
      } else {
        entries[key] = `other ${stat.mode.toString(8)}`;
      }
    }
  };
  walk(Buffer.from(root), "");
  return entries;
}

/** Makes `to` hold what `from` holds now (a lost call left the Outpost root in a state the reference starts from). */
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

/** For a lost write: how many bytes the file holds now (a lost call's outcome is unknown). */
function landed(env: ExecutionEnv, op: Op): string {
  if (op.kind !== "writeFile" && op.kind !== "appendFile") return "";
  try {
    return ` (the file holds ${lstatSync(join(env.cwd, op.path)).size} bytes)`;
  } catch {
    return " (no file)";
  }
}

/** What runs of sequences found. */
export interface Tally {
  ops: number;
  equal: number;
  lost: number;
  /** Calls that did not settle within the bound. */
  hangs: string[];
  falseSuccesses: string[];
  /** Processes left on the target (filled by the caller, which knows where to look). */
  survivors: string[];
  differences: string[];
  maxLostMs: number;
}

export function newTally(): Tally {
  return { ops: 0, equal: 0, lost: 0, hangs: [], falseSuccesses: [], survivors: [], differences: [], maxLostMs: 0 };
}

/** The tally as one line. */
export function describeTally(tally: Tally): string {
  const longest = (tally.maxLostMs / 1000).toFixed(1);
  return (
    `${tally.ops} ops, ${tally.equal} equal to the reference, ${tally.lost} lost (the longest lost call ${longest} s); ` +
    `hangs ${tally.hangs.length}, false successes ${tally.falseSuccesses.length}, survivors ${tally.survivors.length}, ` +
    `other differences ${tally.differences.length}`
  );
}

export interface LockstepRun {
  sandbox: Sandbox;
  /** The Outpost env; its `cwd` is set to a fresh root. */
  env: ExecutionEnv;
  /** A label for the roots and the reports. */
  label: string;
  ops: readonly Op[];
  /** A call that takes this long counts as a hang (the rules' bound for a lost connection). */
  lostBoundMs: number;
  /** Runs just before operation `faultAt` starts (to start the fault; not awaited). */
  faultAt: number;
  onFault: () => void;
}

/** Runs one sequence in lockstep on the env and the reference; adds to `tally`; returns the lost operations. */
export async function runLockstep(run: LockstepRun, tally: Tally): Promise<string[]> {
  const { sandbox, env, label, ops, lostBoundMs } = run;
  // An operation may make a few calls (a reader block's `readLine ×3`, `createTempFile` then `fileInfo`).
  const opDeadlineMs = 3 * lostBoundMs;
  const refRoot = sandbox.root(`ref-${label}`);
  const root = sandbox.root(`outpost-${label}`);
  const calls: Call[] = [];
  env.cwd = root;
  const state = newState(observed(env, calls), root, sandbox.normalizer(root));
  const refState = newState(new NodeExecutionEnv({ cwd: refRoot }), refRoot, sandbox.normalizer(refRoot));
  const messages = sandbox.normalizer(root, { messages: true });
  let diverged = false;
  const lost: string[] = [];
  const where = (step: number, op: Op) => `${label} step ${step + 1} ${describeOp(op)}`;
  for (const [step, op] of ops.entries()) {
    if (diverged) {
      // A lost call's outcome is unknown: the reference goes on from the Outpost root as it is, without readers.
      await withDeadline(closeAll(state), lostBoundMs);
      await closeAll(refState);
      copyTree(root, refRoot);
      diverged = false;
    }
    if (step === run.faultAt) run.onFault();
    calls.length = 0;
    tally.ops++;
    const actual = await withDeadline(runOp(state, op), opDeadlineMs).catch((error: unknown) => ({
      threw: messages.value(error),
    }));
    for (const call of calls) {
      if (call.ms >= lostBoundMs) tally.hangs.push(`${where(step, op)}: ${call.name} took ${call.ms.toFixed(0)} ms`);
    }
    if (actual === HUNG) {
      tally.hangs.push(`${where(step, op)}: unsettled after ${opDeadlineMs} ms`);
      break;
    }
    if (calls.some((call) => call.lost)) {
      tally.lost++;
      const ms = Math.max(...calls.map((call) => call.ms));
      lost.push(`step ${step + 1} ${describeOp(op)} after ${(ms / 1000).toFixed(1)} s${landed(env, op)}`);
      for (const call of calls) if (call.lost) tally.maxLostMs = Math.max(tally.maxLostMs, call.ms);
      diverged = true;
      continue;
    }
    const expected = await runOp(refState, op).catch((error: unknown) => ({ threw: messages.value(error) }));
    if (!isDeepStrictEqual(withoutMessages(expected), withoutMessages(actual))) {
      tally.differences.push(
        `${where(step, op)}: reference ${JSON.stringify(expected)}, Outpost ${JSON.stringify(messages.value(actual))}`,
      );
      diverged = true;
      continue;
    }
    const [refTree, outpostTree] = [tree(refRoot), tree(root)];
    if (!isDeepStrictEqual(refTree, outpostTree)) {
      const wrote = (op.kind === "writeFile" || op.kind === "appendFile") && (actual as { ok?: boolean }).ok === true;
      const report = `${where(step, op)}: reference's tree ${JSON.stringify(refTree)}, Outpost's ${JSON.stringify(outpostTree)}`;
      (wrote ? tally.falseSuccesses : tally.differences).push(report);
      diverged = true;
      continue;
    }
    tally.equal++;
  }
  await withDeadline(closeAll(state), lostBoundMs);
  await closeAll(refState);
  return lost;
}
