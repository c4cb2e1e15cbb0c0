// searchFiles beyond the conformance cases: an agent without the feature (SF15), and a 10⁵-file tree searched
// completely through the real agent while a stalled consumer holds the stream and the agent's memory stays bounded
// by the stream, not the result.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { LocalExecutionEnv } from "../src/env/local-env.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { Connection } from "../src/wire/connection.js";

const FAKE = fileURLToPath(new URL("./fixtures/fake-agent.mjs", import.meta.url));
const LIVE = { abortSignal: undefined };

describe("an agent without searchFiles", () => {
  it("fails not_supported after option validation, sending nothing", async () => {
    const connection = new Connection({ command: [process.execPath, FAKE, "good"] });
    try {
      const env = new RemoteExecutionEnv({ connection, id: "fake", cwd: "/srv" });
      const result = await env.searchFiles("tree", "x", { glob: "*.ts" }, LIVE);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({
        code: "not_supported",
        message: "the agent does not support searchFiles",
        path: "/srv/tree",
      });
      const invalid = await env.searchFiles("tree", "x", { limit: 0 }, LIVE);
      expect(!invalid.ok && invalid.error.code).toBe("invalid");
      const seen = await connection.request("received", {});
      expect(seen.json.ops).not.toContain("searchFiles");
    } finally {
      await connection.close();
    }
  });
});

/** VmHWM / VmRSS of a process, in KiB (Linux). */
function memoryKiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

describe.runIf(process.platform === "linux")("a tree of 10⁵ files", () => {
  const root = mkdtempSync(join(tmpdir(), "outpost-search-large-"));
  const env = new LocalExecutionEnv({ cwd: root });
  afterAll(async () => {
    await env.close();
    rmSync(root, { recursive: true, force: true });
  }, 120_000);

  const DIRS = 1000;
  const PER_DIR = 100;
  // Every file has one long matching line between two that do not match: the matches (~40 MiB of JSON) are far
  // more than the agent may hold at once — the bulk queue (4 MiB), a page (256 KiB) and the files searched ahead.
  const line = `needle ${"x".repeat(300)}`;

  it("finds every match, in order, while a stalled consumer keeps the agent's memory bounded", async () => {
    for (let d = 0; d < DIRS; d++) {
      const dir = join(root, `d${String(d).padStart(4, "0")}`);
      mkdirSync(dir);
      for (let f = 0; f < PER_DIR; f++) {
        writeFileSync(join(dir, `f${String(f).padStart(3, "0")}`), `before\n${line}\nafter\n`);
      }
    }
    const { pid } = await env.connection.info();
    const before = memoryKiB(pid, "VmRSS");
    let count = 0;
    let bytes = 0;
    let previous = "";
    let ordered = true;
    let stalled = false;
    const result = await env.searchFiles(
      "",
      "needle",
      {
        literal: true,
        onPage: (matches) => {
          if (!stalled) {
            // A consumer that stops reading for a while: the agent must wait, not buffer the rest of the matches.
            stalled = true;
            const until = Date.now() + 1500;
            while (Date.now() < until) {}
          }
          for (const match of matches) {
            if (match.path <= previous || match.line !== 2 || match.text !== line) ordered = false;
            previous = match.path;
            bytes += match.path.length + match.text.length + 60;
          }
          count += matches.length;
        },
      },
      LIVE,
    );
    expect(result).toEqual({ ok: true, value: { matches: [], truncated: false, skipped: 0 } });
    expect(count).toBe(DIRS * PER_DIR);
    expect(ordered).toBe(true);
    const grewKiB = memoryKiB(pid, "VmHWM") - before;
    console.log(
      `[searchFiles 10^5] ${count} matches, ${(bytes / 2 ** 20).toFixed(1)} MiB, agent peak grew ${grewKiB} KiB`,
    );
    expect(grewKiB * 1024).toBeLessThan(bytes);
  }, 180_000);
});
