/**
 * Watchers across a cut link (spec/semantics.md AL6, WA14), over SSH (`connectSsh`, ssh2) on the rig at `wan`.
 * Three watchers are open when the link is cut (iptables DROP in the server namespace) for longer than both sides'
 * silence limits, then restored:
 * - one stays open: nothing is delivered during the cut (neither a change nor an error), and after the restore it
 *   reopens on a new agent within the stated bound, delivers exactly one overflow, then reports new changes;
 * - one is closed during the cut: `close()` resolves within the lost-connection bound and nothing follows it;
 * - one whose tree outgrew its directory budget during the cut: its reopen is refused, it delivers that error
 *   (`invalid`) as its last change, without an overflow.
 * The agent and its guardian on the target are gone once the agent's own silence limit passed. Then: sshd's
 * sessions killed under a live watcher, which reopens within seconds with an overflow.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../../properties/targets.js";
import {
  connectSsh,
  type FileWatcher,
  RemoteExecutionEnv,
  type SshExecutionEnv,
  type WatchChange,
} from "../../../sdk/src/index.js";
import { AGENT_SILENCE_MS, cutLink, LOST_BOUND_MS, restoreLink, targetProcesses } from "../cut.js";
import { setProfile } from "../link.js";
import { type RigServer, startRigServer } from "../server.js";

const none = { abortSignal: undefined };
/** Changes on a healthy link arrive within a few round trips and the agent's 50 ms debounce. */
const CHANGE_MS = 10_000;
/**
 * How long after the restore a watcher reopens (AL6): a reconnect attempt already running may first time out
 * (the SSH connect timeout, 15 s), the wait before the next one is at most 30 s (WA14), then a connect and the
 * reopen itself take a few round trips; slack for the shared machine.
 */
const REOPEN_BOUND_MS = 15_000 + 30_000 + 5_000;

const sandbox = createSandbox();
let server: RigServer;
let env: SshExecutionEnv;
const watchers: FileWatcher[] = [];

beforeAll(async () => {
  server = await startRigServer({ env: { TMPDIR: sandbox.tmp } });
  const connected = await connectSsh(server.sshd.target, { ...server.sshd.options, cwd: sandbox.base });
  if (!connected.ok) throw connected.error;
  env = connected.value;
}, 60_000);

afterAll(async () => {
  await restoreLink().catch(() => {});
  for (const watcher of watchers) await watcher.close(none);
  await env?.connection.close();
  await server?.stop();
  sandbox.dispose();
}, 60_000);

/** What one watcher delivered, each change with when it came; waits for one that satisfies a predicate. */
class Changes {
  readonly seen: { at: number; change: WatchChange }[] = [];
  #wake: (() => void) | undefined;

  readonly onChange = (change: WatchChange): void => {
    this.seen.push({ at: performance.now(), change });
    this.#wake?.();
  };

  /** The first change (from index `from` on) that satisfies `ok`, waiting at most `ms`. */
  async until(what: string, ok: (change: WatchChange) => boolean, ms: number, from = 0): Promise<number> {
    const deadline = performance.now() + ms;
    for (;;) {
      const found = this.seen.slice(from).find(({ change }) => ok(change));
      if (found !== undefined) return found.at;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no change ${what} within ${ms} ms; got ${JSON.stringify(this.changes())}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  changes(from = 0): WatchChange[] {
    return this.seen.slice(from).map(({ change }) => change);
  }
}

const naming = (path: string) => (change: WatchChange) => "paths" in change && change.paths.includes(path);
const isOverflow = (change: WatchChange) => "overflow" in change;
const isError = (change: WatchChange) => "error" in change;

async function open(on: RemoteExecutionEnv, path: string, changes: Changes): Promise<FileWatcher> {
  const result = await on.watch([{ path, recursive: true }], changes.onChange, none);
  if (!result.ok) throw result.error;
  watchers.push(result.value);
  return result.value;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe("watchers across a cut link", () => {
  it("reopen with one overflow and report again, end when closed, and end with the reopen's failure", async () => {
    await setProfile("wan");
    const root = sandbox.root("watch-cut");
    for (const name of ["kept", "closed", "budget"]) mkdirSync(join(root, name));
    env.cwd = root;
    const kept = new Changes();
    await open(env, "kept", kept);
    const closing = new Changes();
    const closed = await open(env, "closed", closing);
    // The same connection, watched with a budget of 2 directories: `budget` and one below it.
    const budgetEnv = new RemoteExecutionEnv({
      connection: env.connection,
      id: "outpost:wan-budget",
      cwd: root,
      watch: { maxDirectories: 2 },
    });
    const budget = new Changes();
    mkdirSync(join(root, "budget", "one"));
    await open(budgetEnv, "budget", budget);

    // Each reports while the link is up.
    writeFileSync(join(root, "kept", "before.txt"), "x");
    writeFileSync(join(root, "closed", "before.txt"), "x");
    writeFileSync(join(root, "budget", "one", "before.txt"), "x");
    await kept.until("naming before.txt", naming(join(root, "kept", "before.txt")), CHANGE_MS);
    await closing.until("naming before.txt", naming(join(root, "closed", "before.txt")), CHANGE_MS);
    await budget.until("naming before.txt", naming(join(root, "budget", "one", "before.txt")), CHANGE_MS);

    const agent = (await env.connection.info()).pid;
    const guardian = Number(readFileSync(`/proc/${agent}/stat`, "utf8").split(") ")[1].split(" ")[1]);
    expect((await targetProcesses()).some((line) => line.startsWith(`${agent} `))).toBe(true);
    const counts = { kept: kept.seen.length, closing: closing.seen.length, budget: budget.seen.length };

    await cutLink(true);
    const cutAt = performance.now();
    // Changes nobody can see while the link is down; the budget's tree grows past 2 directories.
    writeFileSync(join(root, "kept", "during.txt"), "x");
    mkdirSync(join(root, "budget", "two"));
    await sleep(5_000);
    let closedAfter = Number.NaN;
    const closeStarted = performance.now();
    const closing1 = closed.close(none).then(() => {
      closedAfter = performance.now() - closeStarted;
    });
    await sleep(AGENT_SILENCE_MS - 5_000);
    const survivors = await targetProcesses();
    const during = {
      kept: kept.changes(counts.kept),
      closing: closing.changes(counts.closing),
      budget: budget.changes(counts.budget),
    };
    await cutLink(false);
    const restoredAt = performance.now();
    console.log(`watch cut: link cut for ${seconds(restoredAt - cutAt)}; on the target then: ${survivors.length}`);

    // Nothing left on the target once the agent's silence limit passed: no agent, no guardian.
    expect(survivors).toEqual([]);
    expect([agent, guardian].filter((pid) => survivors.some((line) => line.startsWith(`${pid} `)))).toEqual([]);
    // No change and no error while the link was down: a cut is not a failure of the watchers.
    expect(during).toEqual({ kept: [], closing: [], budget: [] });

    // The watcher closed during the cut: close() resolved within the bound, and nothing came after it.
    await closing1;
    expect(closedAfter).toBeLessThan(LOST_BOUND_MS);
    expect(closing.changes(counts.closing)).toEqual([]);

    // The kept watcher reopens with exactly one overflow.
    const overflowAt = await kept.until("overflow after the restore", isOverflow, REOPEN_BOUND_MS, counts.kept);
    expect(overflowAt - restoredAt).toBeLessThan(REOPEN_BOUND_MS);
    expect(kept.changes(counts.kept)).toEqual([{ overflow: true }]);
    // The budget's watcher: its reopen is refused (the tree has 3 directories), its last change is that error.
    const errorAt = await budget.until("error after the restore", isError, REOPEN_BOUND_MS, counts.budget);
    const refused = budget.changes(counts.budget);
    expect(refused).toHaveLength(1);
    const [last] = refused;
    expect("error" in last && last.error.code).toBe("invalid");
    expect("error" in last && last.error.message).toBe("Watched paths exceed 2 directories");

    // And reports again: a change after the overflow is named.
    const fresh = kept.seen.length;
    writeFileSync(join(root, "kept", "after.txt"), "x");
    await kept.until("naming after.txt", naming(join(root, "kept", "after.txt")), CHANGE_MS, fresh);
    expect(kept.changes(counts.kept).filter(isOverflow)).toHaveLength(1);
    // The stopped watcher reports nothing more.
    writeFileSync(join(root, "budget", "one", "after.txt"), "x");
    await sleep(1_000);
    expect(budget.changes(counts.budget)).toEqual(refused);
    expect(closing.changes(counts.closing)).toEqual([]);
    console.log(
      `watch cut: close() during the cut ${seconds(closedAfter)}; after the restore: overflow ${seconds(
        overflowAt - restoredAt,
      )}, budget error ${seconds(errorAt - restoredAt)}`,
    );
  }, 180_000);

  it("when sshd's sessions are killed, a watcher reopens within seconds with one overflow", async () => {
    const root = sandbox.root("watch-kill");
    env.cwd = root;
    const changes = new Changes();
    await open(env, ".", changes);
    writeFileSync(join(root, "before.txt"), "x");
    await changes.until("naming before.txt", naming(join(root, "before.txt")), CHANGE_MS);
    const from = changes.seen.length;
    const killedAt = performance.now();
    for (const pid of await server.sshd.sessions()) process.kill(pid, "SIGKILL");
    // The first reopen waits 1 s (WA14), then a connect: a few round trips.
    const overflowAt = await changes.until("overflow after the kill", isOverflow, CHANGE_MS, from);
    expect(changes.changes(from)).toEqual([{ overflow: true }]);
    writeFileSync(join(root, "after.txt"), "x");
    await changes.until("naming after.txt", naming(join(root, "after.txt")), CHANGE_MS, from);
    console.log(`watch kill: overflow ${seconds(overflowAt - killedAt)} after sshd's sessions were killed`);
  }, 60_000);
});
