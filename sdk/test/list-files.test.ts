// listFiles beyond the conformance cases: an agent without the feature (LF17), and a 10⁵-file tree listed
// completely through the real agent while the agent's memory stays bounded by the stream, not the result.
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

describe("an agent without listFiles", () => {
  it("fails not_supported after option validation, sending nothing", async () => {
    // The fake speaks protocol 1 and announces only "fake", like an upstream daemon announces nothing.
    const connection = new Connection({ command: [process.execPath, FAKE, "good"] });
    try {
      const env = new RemoteExecutionEnv({ connection, id: "fake", cwd: "/srv" });
      const result = await env.listFiles("tree", { glob: "*.ts" }, LIVE);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({
        code: "not_supported",
        message: "the agent does not support listFiles",
        path: "/srv/tree",
      });
      const invalid = await env.listFiles("tree", { limit: 0 }, LIVE);
      expect(!invalid.ok && invalid.error.code).toBe("invalid");
      const seen = await connection.request("received", {});
      expect(seen.json.ops).not.toContain("listFiles");
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
  const root = mkdtempSync(join(tmpdir(), "outpost-listfiles-large-"));
  const env = new LocalExecutionEnv({ cwd: root });
  afterAll(async () => {
    await env.close();
    rmSync(root, { recursive: true, force: true });
  });

  const DIRS = 1000;
  const PER_DIR = 100;
  // Long names make the whole listing (~24 MiB) larger than what the agent may hold at once: the bulk queue
  // (4 MiB), one page (256 KiB) and the directories read ahead (4096 entries), twice over for the GC's headroom.
  const pad = "n".repeat(240);

  it("is listed completely, in order, while the agent's memory stays bounded", async () => {
    for (let d = 0; d < DIRS; d++) {
      const dir = join(root, `d${String(d).padStart(4, "0")}`);
      mkdirSync(dir);
      for (let f = 0; f < PER_DIR; f++) writeFileSync(join(dir, `${pad}${String(f).padStart(3, "0")}`), "");
    }
    const { pid } = await env.connection.info();
    const before = memoryKiB(pid, "VmRSS");
    let count = 0;
    let bytes = 0;
    let previous = "";
    let ordered = true;
    let stalled = false;
    const result = await env.listFiles(
      "",
      {
        onPage: (paths) => {
          if (!stalled) {
            // A consumer that stops reading for a while: the agent must wait, not buffer the rest of the tree.
            stalled = true;
            const until = Date.now() + 1500;
            while (Date.now() < until) {}
          }
          for (const path of paths) {
            if (path <= previous) ordered = false;
            previous = path;
            bytes += path.length + 1;
          }
          count += paths.length;
        },
      },
      LIVE,
    );
    expect(result).toEqual({ ok: true, value: { paths: [], truncated: false } });
    expect(count).toBe(DIRS * PER_DIR);
    expect(ordered).toBe(true);
    const grewKiB = memoryKiB(pid, "VmHWM") - before;
    console.log(`[listFiles 10^5] ${count} paths, ${(bytes / 2 ** 20).toFixed(1)} MiB, agent peak grew ${grewKiB} KiB`);
    // An agent that kept what the consumer had not taken yet would grow by at least the whole listing.
    expect(grewKiB * 1024).toBeLessThan(bytes);
  }, 120_000);
});
