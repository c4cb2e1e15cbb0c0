/**
 * Watching across a connection (WA15, WA16): what a watcher must survive when it runs in an agent — a change set too
 * large for one frame, and the context that opened it going away. Every target must pass them; an in-process
 * watcher passes trivially, which is the point: the agent envs must not be worse.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import { abortable, assert, at, live, put, value } from "./support.js";
import type { Define, Setup } from "./types.js";
import { Recorder, watching } from "./watch.js";

/** Time of one case (Durable's watch cases take the same). */
const caseMs = 30_000;

/**
 * Control characters are escaped as \u0001 in JSON (six bytes each): ten nested directories named with 250 of them
 * give every file a 15 KB path entry, so 1,200 files make a change set of 18 MB, more than one 16 MiB frame.
 */
const deepName = "\u0001".repeat(250);
const depth = 10;
const files = 1200;

async function bigTree(env: ExecutionEnv, root: string): Promise<void> {
  const deep = [root, ...Array.from({ length: depth }, () => deepName)].join("/");
  for (let start = 0; start < files; start += 100) {
    const batch = Array.from({ length: Math.min(100, files - start) }, (_, i) => put(env, `${deep}/${start + i}`, ""));
    await Promise.all(batch);
  }
}

/** Registers the cases. */
export function watchConnectionCases(_setup: Setup, define: Define): void {
  define(
    "watch: a change set too large for one frame is still covered, and the watcher goes on",
    "WA15 WA12",
    async (env) => {
      value(await env.createDir("watched", { recursive: true }, live), "mkdir watched");
      await bigTree(env, "staging/tree");
      const { watcher, recorder } = await watching(env, [{ path: "watched", recursive: true }], "polling");
      try {
        let from = recorder.mark();
        value(await env.renameFile("staging/tree", "watched/tree", live), "rename the tree in");
        await recorder.covered(at(env, "watched/tree"), "the big tree", from);
        assert.equal(watcher.mode, "polling", "an oversized change does not switch modes");
        from = recorder.mark();
        await put(env, "watched/followup.txt", "after");
        await recorder.covered(at(env, "watched/followup.txt"), "a change after the big one", from);
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    },
    { timeoutMs: caseMs, settings: { watch: { mode: "polling", pollIntervalMs: 200 } } },
  );

  define(
    "watch: a watcher outlives the context that opened it",
    "WA16 WA1",
    async (env) => {
      const { context, controller } = abortable();
      const recorder = new Recorder();
      const watcher = value(await env.watch([{ path: "." }], recorder.onChange, context), "watch");
      try {
        controller.abort();
        const from = recorder.mark();
        await put(env, "later.txt", "x");
        await recorder.covered(at(env, "later.txt"), "a write after the opening context was aborted", from);
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    },
    { timeoutMs: caseMs },
  );
}
