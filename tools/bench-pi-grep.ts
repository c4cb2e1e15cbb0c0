// `make bench` (pi grep part, `--only pi-grep`): pi's grep tool (`@outpost/pi-coding-agent`) through
// LocalExecutionEnv on a tree of BENCH_PI_FILES files (default 5,000; the listFiles rows' tree shape,
// tools/bench-list-files.ts, filled with the text of tools/bench-search-files.ts), with each of its three backends
// forced: the agent's `searchFiles` (`agent`), `rg --json` run on the target through `exec` (`rg`, the anchor: the
// issue's goal is `agent` within 1.5× of it on a target without ripgrep), and the search through the env that
// served targets without ripgrep before (`env`: the listing, then every file read line by line), beside pi's own
// local grep (`pi`, ripgrep started by pi in process, also an anchor). Interleaved rounds; the rows each returns to
// the model are counted and logged, so a reader sees they agree.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalExecutionEnv } from "../sdk/src/index.js";
import { measureRow, type RowResult } from "./bench-harness.js";
import { counted, makeTree } from "./bench-list-files.js";
import { content } from "./bench-search-files.js";

/** pi's grep tool with each backend on a tree of BENCH_PI_FILES files, beside pi's own local grep. */
export async function benchPiGrep(root: string, quick: boolean, log: (line: string) => void): Promise<RowResult[]> {
  const files = Number(process.env.BENCH_PI_FILES ?? (quick ? 500 : 5_000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5));
  await makeTree(root, files, content);
  // pi reads its agent directory when it loads: a private one, and no downloads (as the integration's tests do).
  const agentDir = mkdtempSync(join(tmpdir(), "outpost-bench-pi-"));
  process.env.PI_OFFLINE = "1";
  process.env.PI_CODING_AGENT_DIR = agentDir;
  const { createGrepToolDefinition } = await import("@mariozechner/pi-coding-agent");
  const { createOutpostGrepToolDefinition } = await import("../integrations/pi-coding-agent/src/index.js");
  const env = new LocalExecutionEnv({ cwd: root });
  const rows: RowResult[] = [];
  try {
    await env.connection.info();
    type Tool = { execute: (...args: never[]) => Promise<{ content: { type: string; text?: string }[] }> };
    const tools: [string, Tool, boolean][] = [
      ["agent", createOutpostGrepToolDefinition(env, root, { backend: "agent" }) as unknown as Tool, false],
      ["rg", createOutpostGrepToolDefinition(env, root, { backend: "ripgrep" }) as unknown as Tool, true],
      ["env", createOutpostGrepToolDefinition(env, root, { backend: "env" }) as unknown as Tool, false],
      ["pi", createGrepToolDefinition(root) as unknown as Tool, true],
    ];
    for (const [label, pattern] of [
      ["rare literal", "RARE_NEEDLE_4711"],
      ["frequent literal, stops at pi's 100 matches", "context"],
    ]) {
      const counts = new Map<string, number>();
      const candidates = tools.map(([name, tool, anchor]) =>
        counted(
          name,
          async () => {
            const execute = tool.execute as unknown as (
              id: string,
              params: { pattern: string; literal: boolean },
            ) => Promise<{ content: { type: string; text?: string }[] }>;
            const result = await execute("bench", { pattern, literal: true });
            const text = result.content[0]?.text ?? "";
            // The rows shown to the model (notices after a blank line left out).
            return text
              .split("\n\n")[0]
              .split("\n")
              .filter((line) => /^\S+:\d+: /.test(line)).length;
          },
          counts,
          anchor,
        ),
      );
      rows.push(
        await measureRow({
          name: `pi grep ${files.toLocaleString("en")} files, ${label} ${JSON.stringify(pattern)}`,
          unit: "ms",
          rounds,
          perRound: 1,
          candidates,
        }),
      );
      log(`pi grep ${label}: rows: ${[...counts].map(([name, count]) => `${name} ${count}`).join(", ")}`);
    }
  } finally {
    await env.close();
    rmSync(agentDir, { recursive: true, force: true });
  }
  return rows;
}
