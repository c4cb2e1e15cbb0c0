// watch() on the agent envs with the real agent: Node's checkpoints, callbacks, close, the test hook for running
// out of native watches, and RemoteWatcher across a lost agent (killed under a live watcher).
import { execFile, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FileWatcher, WatchChange } from "../src/contract/types.js";
import { LocalExecutionEnv } from "../src/env/local-env.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import type { RemoteWatchOptions } from "../src/env/watch.js";
import { Connection } from "../src/wire/connection.js";
import { heldProcesses } from "./fixtures/connections.js";
import { realAgent } from "./fixtures/real-agent.js";

const context = { abortSignal: undefined };
const WAIT_MS = 3_000;
const IDLE = fileURLToPath(new URL("./fixtures/watch-idle.ts", import.meta.url));

/** Collects changes and waits for one that satisfies a predicate (bounded). */
class Changes {
  readonly seen: WatchChange[] = [];
  #waiters: (() => void)[] = [];

  readonly onChange = (change: WatchChange): void => {
    this.seen.push(change);
    for (const wake of this.#waiters.splice(0)) wake();
  };

  async until(what: string, ok: (seen: WatchChange[]) => boolean, ms = WAIT_MS): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok(this.seen)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no change ${what} within ${ms} ms; got ${JSON.stringify(this.seen)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  covering(path: string, ms?: number): Promise<void> {
    return this.until(`covering ${path}`, (seen) => seen.some((c) => covers(c, path)), ms);
  }

  /** Waits `ms` and returns what arrived meanwhile. */
  async during(ms: number): Promise<WatchChange[]> {
    const from = this.seen.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.seen.slice(from);
  }
}

/** Whether the tests run as root and can start the agent as nobody (setpriv). */
function asNobody(): boolean {
  if (process.getuid?.() !== 0 || realAgent === undefined) return false;
  // The agent must be reachable for nobody too (a checkout under /root is not).
  const probe = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", realAgent, "--version"];
  return spawnSync("setpriv", probe).status === 0;
}

/** Whether this machine lets us make a user namespace (some containers forbid it). */
function userNamespaces(): boolean {
  return process.platform === "linux" && spawnSync("unshare", ["-U", "-r", "true"]).status === 0;
}

function covers(change: WatchChange, path: string): boolean {
  if ("overflow" in change) return true;
  if (!("paths" in change)) return false;
  return change.paths.some((p) => path === p || path.startsWith(`${p}/`));
}

describe.runIf(realAgent !== undefined)("watch on the agent envs", () => {
  let dir: string;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    dir = realpathSync(await mkdtemp(join(tmpdir(), "outpost-watch-")));
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await rm(dir, { recursive: true, force: true });
  });

  function localEnv(watch?: RemoteWatchOptions): LocalExecutionEnv {
    const env = new LocalExecutionEnv({ cwd: dir, agentPath: realAgent, watch });
    closers.push(() => env.close());
    return env;
  }

  function keep(watcher: FileWatcher): FileWatcher {
    closers.push(() => watcher.close(context));
    return watcher;
  }

  it("checks for an abort before opening: aborted, no path", async () => {
    const env = localEnv();
    const controller = new AbortController();
    controller.abort();
    const changes = new Changes();
    const result = await env.watch([{ path: "." }], changes.onChange, { abortSignal: controller.signal });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("aborted");
    expect(result.error.path).toBeUndefined();
  });

  it("checks again once the watcher is established, and then closes it", async () => {
    const env = localEnv({ mode: "polling", pollIntervalMs: 50 });
    const controller = new AbortController();
    const changes = new Changes();
    const pending = env.watch([{ path: "." }], changes.onChange, { abortSignal: controller.signal });
    controller.abort();
    const result = await pending;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("aborted");
    expect(result.error.path).toBeUndefined();
    writeFileSync(join(dir, "after.txt"), "x");
    expect(await changes.during(300)).toEqual([]);
  });

  it("does not hold the host process while it watches (in this thread)", async () => {
    // Agents of earlier tests may still be exiting.
    await expect.poll(heldProcesses, { timeout: 5000 }).toBe(0);
    const env = localEnv();
    const changes = new Changes();
    const result = await env.watch([{ path: "." }], changes.onChange, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    // The watch request lets go of the process at its first event, the one that says it is established.
    expect(heldProcesses()).toBe(0);
    writeFileSync(join(dir, "seen.txt"), "x");
    await changes.covering(join(dir, "seen.txt"));
    expect(heldProcesses()).toBe(0);
  });

  it("outlives the context that opened it", async () => {
    const env = localEnv();
    const controller = new AbortController();
    const changes = new Changes();
    const result = await env.watch([{ path: "." }], changes.onChange, { abortSignal: controller.signal });
    if (!result.ok) throw result.error;
    keep(result.value);
    controller.abort();
    writeFileSync(join(dir, "later.txt"), "x");
    await changes.covering(join(dir, "later.txt"));
  });

  it("resolves each target against the env's cwd and reports absolute paths", async () => {
    const env = localEnv();
    const changes = new Changes();
    const result = await env.watch([{ path: "sub/AGENTS.md" }], changes.onChange, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "AGENTS.md"), "x");
    await changes.until("naming the target", (seen) =>
      seen.some((c) => "paths" in c && c.paths.includes(join(dir, "sub", "AGENTS.md"))),
    );
  });

  it("swallows what onChange throws and keeps watching", async () => {
    const env = localEnv();
    const changes = new Changes();
    let calls = 0;
    const result = await env.watch(
      [{ path: "." }],
      (change) => {
        calls++;
        changes.onChange(change);
        throw new Error("callback failure");
      },
      context,
    );
    if (!result.ok) throw result.error;
    keep(result.value);
    writeFileSync(join(dir, "one.txt"), "1");
    await changes.covering(join(dir, "one.txt"));
    writeFileSync(join(dir, "two.txt"), "2");
    await changes.covering(join(dir, "two.txt"));
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it("closes idempotently; nothing is delivered after close", async () => {
    const env = localEnv();
    const changes = new Changes();
    const result = await env.watch([{ path: ".", recursive: true }], changes.onChange, context);
    if (!result.ok) throw result.error;
    expect(result.value.mode).toBe("native");
    await Promise.all([result.value.close(context), result.value.close(context)]);
    await result.value.close(context);
    writeFileSync(join(dir, "after.txt"), "x");
    expect(await changes.during(300)).toEqual([]);
  });

  it("reports the forced mode", async () => {
    const env = localEnv({ mode: "polling", pollIntervalMs: 100 });
    const result = await env.watch([{ path: "." }], () => {}, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    expect(result.value.mode).toBe("polling");
  });

  it("switches to polling with one overflow when the agent runs out of native watches (test hook)", async () => {
    mkdirSync(join(dir, "tree", "a"), { recursive: true });
    const ancestors = dir.split("/").length; // the root and every directory down to dir
    const env = localEnv({ pollIntervalMs: 100, nativeWatchLimit: ancestors + 1 });
    const changes = new Changes();
    const result = await env.watch([{ path: "tree", recursive: true }], changes.onChange, context);
    if (!result.ok) throw result.error;
    const watcher = keep(result.value);
    // The ancestors and tree fit; tree/a does not.
    expect(watcher.mode).toBe("polling");
    expect(changes.seen).toEqual([{ overflow: true }]);
    writeFileSync(join(dir, "tree", "a", "new.txt"), "x");
    await changes.until("naming the new file", (seen) =>
      seen.some((c) => "paths" in c && c.paths.includes(join(dir, "tree", "a", "new.txt"))),
    );
    expect(changes.seen.filter((c) => "overflow" in c)).toHaveLength(1);
  });

  it.skipIf(!userNamespaces())(
    "switches to polling with one overflow when the kernel runs out of inotify watches (ENOSPC)",
    async () => {
      mkdirSync(join(dir, "tree"));
      // The agent runs in a user namespace of its own whose inotify limit covers exactly the open: tree and its
      // ancestors (dir, its parents, the root). The machine's limit and other processes are untouched.
      const watches = dir.split("/").length + 1;
      const launch = `echo ${watches} > /proc/sys/user/max_inotify_watches && exec "$0" "$@"`;
      const connection = new Connection({ command: ["unshare", "-U", "-r", "sh", "-c", launch, realAgent!] });
      closers.push(() => connection.close());
      const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir, watch: { pollIntervalMs: 100 } });
      const changes = new Changes();
      const result = await env.watch([{ path: "tree", recursive: true }], changes.onChange, context);
      if (!result.ok) throw result.error;
      const watcher = keep(result.value);
      expect(watcher.mode).toBe("native");
      mkdirSync(join(dir, "tree", "new"));
      await changes.until("overflow", (seen) => seen.some((c) => "overflow" in c));
      expect(watcher.mode).toBe("polling");
      writeFileSync(join(dir, "tree", "new", "after.txt"), "x");
      await changes.until("naming the new file", (seen) =>
        seen.some((c) => "paths" in c && c.paths.includes(join(dir, "tree", "new", "after.txt"))),
      );
      expect(changes.seen.filter((c) => "overflow" in c)).toHaveLength(1);
    },
  );

  it.skipIf(!asNobody())("fails permission_denied for an unreadable target, at open and later", async () => {
    // Root reads everything: the agent runs as nobody. A chmod of the watched directory is an event of its own.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, "locked"), { mode: 0o000 });
    mkdirSync(join(dir, "open"), { mode: 0o777 });
    const connection = new Connection({
      command: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", realAgent!],
    });
    closers.push(() => connection.close());
    const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir });
    const refused = await env.watch([{ path: "locked" }], () => {}, context);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error.code).toBe("permission_denied");
    expect(refused.error.path).toBe(join(dir, "locked"));
    const changes = new Changes();
    const result = await env.watch([{ path: "open" }], changes.onChange, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    chmodSync(join(dir, "open"), 0o000);
    await changes.until("an error", (seen) => seen.some((c) => "error" in c));
    const last = changes.seen.at(-1);
    expect(last !== undefined && "error" in last && last.error.code).toBe("permission_denied");
  });

  it("reopens after the agent is killed under a live watcher, then reports an overflow and later changes", async () => {
    const connection = new Connection({ command: [realAgent!] });
    closers.push(() => connection.close());
    const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir });
    const changes = new Changes();
    // A callback that throws, even at the overflow the reopen delivers, must not break the watcher.
    const throwing = (change: WatchChange) => {
      changes.onChange(change);
      throw new Error("callback failure");
    };
    const result = await env.watch([{ path: ".", recursive: true }], throwing, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    const { pid } = await connection.info();
    process.kill(pid, "SIGKILL");
    // The first reopen waits 1 s.
    await changes.until("overflow after the reopen", (seen) => seen.some((c) => "overflow" in c), 2 * WAIT_MS);
    expect((await connection.info()).pid).not.toBe(pid);
    writeFileSync(join(dir, "after-reopen.txt"), "x");
    await changes.until("naming the new file", (seen) =>
      seen.some((c) => "paths" in c && c.paths.includes(join(dir, "after-reopen.txt"))),
    );
  });

  it("backs off while no new agent can start (1 s, 2 s, 4 s …), then reopens", async () => {
    const starts: number[] = [];
    let failing = 0;
    const connection = new Connection({
      command: async () => {
        starts.push(performance.now());
        if (failing > 0) {
          failing--;
          throw new Error("host unreachable");
        }
        return [realAgent!];
      },
    });
    closers.push(() => connection.close());
    const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir });
    const changes = new Changes();
    const result = await env.watch([{ path: "." }], changes.onChange, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    const { pid } = await connection.info();
    failing = 2;
    const killedAt = performance.now();
    process.kill(pid, "SIGKILL");
    await changes.until("overflow after the reopen", (seen) => seen.some((c) => "overflow" in c), 10_000);
    // Start 1 opened the watch; 2 and 3 failed; 4 reopened it.
    expect(starts).toHaveLength(4);
    const [, second, third, fourth] = starts;
    expect(second - killedAt).toBeGreaterThanOrEqual(950);
    expect(third - second).toBeGreaterThanOrEqual(1950);
    expect(fourth - third).toBeGreaterThanOrEqual(3950);
    writeFileSync(join(dir, "after.txt"), "x");
    await changes.covering(join(dir, "after.txt"));
  }, 20_000);

  it("reports the error and stops when the reopen fails for good", async () => {
    const connection = new Connection({ command: [realAgent!] });
    closers.push(() => connection.close());
    const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir, watch: { maxDirectories: 1 } });
    const changes = new Changes();
    const result = await env.watch([{ path: ".", recursive: true }], changes.onChange, context);
    if (!result.ok) throw result.error;
    keep(result.value);
    const { pid } = await connection.info();
    process.kill(pid, "SIGKILL");
    const deadline = Date.now() + WAIT_MS;
    while (connection.session() !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // While no agent runs, the tree grows past the budget: the agent that opens the watch again refuses it.
    mkdirSync(join(dir, "sub"));
    await changes.until("an error", (seen) => seen.some((c) => "error" in c), 2 * WAIT_MS);
    const last = changes.seen.at(-1);
    expect(last !== undefined && "error" in last && last.error.code).toBe("invalid");
    expect(changes.seen.filter((c) => "overflow" in c)).toEqual([]);
    writeFileSync(join(dir, "ignored.txt"), "x");
    expect(await changes.during(300)).toEqual([]);
  });

  it("across an agent gone silent (stopped, as behind a cut link): nothing meanwhile, then one overflow and changes; close() ends within the silence limit [AL6]", async () => {
    const silenceLimitMs = 1_000;
    const connection = new Connection({ command: [realAgent!], pingIntervalMs: 100, silenceLimitMs });
    closers.push(() => connection.close());
    const env = new RemoteExecutionEnv({ connection, id: "outpost:test", cwd: dir });
    mkdirSync(join(dir, "kept"));
    mkdirSync(join(dir, "closed"));
    const changes = new Changes();
    const kept = await env.watch([{ path: "kept" }], changes.onChange, context);
    if (!kept.ok) throw kept.error;
    keep(kept.value);
    const closing = new Changes();
    const closed = await env.watch([{ path: "closed" }], closing.onChange, context);
    if (!closed.ok) throw closed.error;
    const { pid } = await connection.info();
    // The agent answers nothing, as when the link is cut: only the silence limit can tell.
    process.kill(pid, "SIGSTOP");
    closers.push(async () => {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    });
    writeFileSync(join(dir, "kept", "during.txt"), "x");
    const closeStarted = performance.now();
    await closed.value.close(context);
    const closedAfter = performance.now() - closeStarted;
    expect(closedAfter).toBeLessThan(silenceLimitMs + WAIT_MS);
    // The loss is seen after the silence limit; the reopen waits 1 s (WA14).
    await changes.until("overflow after the reopen", (seen) => seen.some((c) => "overflow" in c), 2 * WAIT_MS);
    expect(changes.seen).toEqual([{ overflow: true }]);
    expect((await connection.info()).pid).not.toBe(pid);
    writeFileSync(join(dir, "kept", "after.txt"), "x");
    await changes.until("naming after.txt", (seen) =>
      seen.some((c) => "paths" in c && c.paths.includes(join(dir, "kept", "after.txt"))),
    );
    writeFileSync(join(dir, "closed", "after.txt"), "x");
    expect(await changes.during(300)).not.toContainEqual({ overflow: true });
    expect(closing.seen).toEqual([]);
  });
});

describe.runIf(realAgent !== undefined)("a watcher and the host process", () => {
  async function runFixture(...extra: string[]): Promise<unknown[]> {
    const dir = realpathSync(await mkdtemp(join(tmpdir(), "outpost-watch-idle-")));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", IDLE, realAgent!, dir, ...extra],
        { timeout: 20_000 },
      );
      return stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it("never keeps the host process alive", async () => {
    expect(await runFixture()).toEqual([{ ok: true, mode: "native" }]);
  });

  it("keeps it alive while close() waits for the agent", async () => {
    expect(await runFixture("close")).toEqual([{ ok: true, mode: "native" }, { closed: true }]);
  });
});
