/**
 * W9: a writeFile with an abort signal keeps pieces in flight, and an abort stops the file at a piece boundary
 * with no piece written after the agent saw the cancel. The frames are tapped: the abort fires as the third chunk's
 * reply arrives; pieces still unanswered then get cancels; afterwards the file holds exactly the first `write` and
 * the chunks the agent answered as written (none it refused), a prefix of the content, and it does not grow.
 * (That pieces are pipelined at all is sdk/test/round-trips.test.ts's "writeFile 4 MiB, signal" row.)
 */
import { getEventListeners } from "node:events";
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packagedAgent } from "../src/env/agent-binary.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { Connection } from "../src/wire/connection.js";
import { frameTap, type TapEntry } from "./fixtures/frame-tap.js";
import { patterned } from "./fixtures/patterned.js";

const PIECE = 512 * 1024;
const base = realpathSync(mkdtempSync(join(tmpdir(), "outpost-write-abort-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("writeFile with an abort signal over the pipe transport", () => {
  it("pipelines its pieces, and an abort leaves exactly the pieces the agent wrote before the cancel", async () => {
    const controller = new AbortController();
    const chunkIds = new Set<number>();
    let answered = 0;
    let listeners = 0;
    const onEntry = (entry: TapEntry) => {
      listeners = Math.max(listeners, getEventListeners(controller.signal, "abort").length);
      if (entry.kind === "request" && entry.op === "writeChunk") chunkIds.add(entry.id);
      if (entry.kind === "reply" && chunkIds.has(entry.id) && ++answered === 3) controller.abort();
    };
    const { log, launch } = frameTap(packagedAgent(), onEntry);
    const connection = new Connection({ launch });
    try {
      const env = new RemoteExecutionEnv({ connection, id: "outpost:abort", cwd: base });
      const content = patterned(64 * 1024 * 1024);
      const result = await env.writeFile("f", content, { abortSignal: controller.signal });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect([result.error.code, result.error.message, result.error.path]).toEqual([
        "aborted",
        "The operation was aborted",
        join(base, "f"),
      ]);
      // The pieces in flight listen through one relay, not each on the caller's signal (which at 11 listeners
      // makes Node warn of a leak in the host's process).
      expect(listeners).toBeLessThanOrEqual(2);
      // Pieces were unanswered when the abort fired, and each got a cancel.
      const cancels = log.filter((entry) => entry.kind === "cancel").length;
      expect(cancels).toBeGreaterThan(0);
      const size = statSync(join(base, "f")).size;
      expect(size % PIECE).toBe(0);
      expect(size).toBeLessThan(content.length);
      expect(readFileSync(join(base, "f")).equals(content.subarray(0, size))).toBe(true);
      // Every chunk was answered; the file holds the first `write` and the chunks answered as written, nothing
      // more — not even a moment later.
      const replies = log.filter((entry) => entry.kind === "reply" && chunkIds.has(entry.id));
      expect(replies.length).toBe(chunkIds.size);
      const writtenChunks = replies.filter((entry) => entry.kind === "reply" && entry.ok).length;
      expect(writtenChunks).toBeGreaterThanOrEqual(3);
      expect(size / PIECE).toBe(1 + writtenChunks);
      await new Promise((done) => setTimeout(done, 200));
      expect(statSync(join(base, "f")).size).toBe(size);
    } finally {
      await connection.close();
    }
  });
});
