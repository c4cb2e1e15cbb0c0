/**
 * The reference watcher's WA10: running out of native watches switches to polling and reports `{overflow: true}`.
 * The limit is lowered in a user namespace of the fixture's own (`/proc/sys/user/max_inotify_watches` is per
 * namespace), so the machine's limit, and every other process's watches, stay untouched.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context, WatchChange } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { describe, expect, it } from "vitest";

/** Whether this machine lets us make a user namespace (some containers forbid it). */
function userNamespaces(): boolean {
  if (process.platform !== "linux") return false;
  return spawnSync("unshare", ["-U", "-r", "true"]).status === 0;
}

describe("reference NodeFileWatcher out of native watches", () => {
  it.skipIf(!userNamespaces())("switches to polling, reports overflow once and keeps reporting [WA10]", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "outpost-watches-")));
    try {
      mkdirSync(join(dir, "tree/a/b"), { recursive: true });
      const fixture = new URL("./fixtures/out-of-watches.ts", import.meta.url).pathname;
      const tsx = new URL("../../node_modules/.bin/tsx", import.meta.url).pathname;
      const out = execFileSync("unshare", ["-U", "-r", tsx, fixture, dir], { encoding: "utf8", timeout: 20_000 });
      const lines = out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines[0]).toEqual({ mode: "native" });
      const overflows = lines.filter((line) => line.change !== undefined && "overflow" in line.change);
      expect(overflows).toEqual([{ change: { overflow: true } }]);
      expect(lines).toContainEqual({ mode: "polling" });
      const after = join(dir, "tree/new/after.txt");
      expect(lines.some((line) => line.change?.paths?.includes(after))).toBe(true);
      expect(lines.at(-1)).toEqual({ done: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("reference NodeExecutionEnv.watch checkpoints", () => {
  it("closes the watcher it opened when the signal fires during the open, and answers aborted [WA1]", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "outpost-watch-abort-")));
    try {
      // A signal that is live at the entry checkpoint and aborted at the next one (after the watcher opened).
      let reads = 0;
      const signal = {
        get aborted() {
          reads += 1;
          return reads > 1;
        },
      } as AbortSignal;
      const context: Context = { abortSignal: signal };
      const changes: WatchChange[] = [];
      const env = new NodeExecutionEnv({ cwd: dir, watch: { mode: "polling", pollIntervalMs: 20 } });
      const result = await env.watch([{ path: "f.txt" }], (change) => changes.push(change), context);
      expect(result.ok ? "ok" : [result.error.code, result.error.path]).toEqual(["aborted", undefined]);
      expect(reads).toBe(2);
      writeFileSync(join(dir, "f.txt"), "x");
      // A watcher left running would report within a few 20 ms polls; a live one on the same file shows the wait
      // was long enough.
      const witness: WatchChange[] = [];
      const live = await env.watch([{ path: "f.txt" }], (change) => witness.push(change), {
        abortSignal: undefined,
      });
      if (!live.ok) throw live.error;
      writeFileSync(join(dir, "f.txt"), "xy");
      const deadline = Date.now() + 3000;
      while (witness.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await live.value.close({ abortSignal: undefined });
      expect(witness.length).toBeGreaterThan(0);
      expect(changes).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
