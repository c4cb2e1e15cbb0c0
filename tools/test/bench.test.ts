// The bench is a program, not a timed test: this only checks that it runs (a --quick smoke of the operation and
// listing rows, without the SSH side) and that its JSON has every row with a finite median per candidate, and that
// the harness's statistics and round order are right. No timing is asserted.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { measureRow, median, quantile, type RowResult, rotation } from "../bench-harness.js";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../..", import.meta.url));

describe("the bench harness", () => {
  it("takes medians, nearest-rank quantiles and rotates the candidate order once per round", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.99)).toBe(10);
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5)).toBe(5);
    expect([0, 1, 2, 3].map((round) => rotation(["a", "b", "c"], round).join(""))).toEqual([
      "abc",
      "bca",
      "cab",
      "abc",
    ]);
  });

  it("runs every candidate perRound times per round in rotated order, hooks untimed, failures reported", async () => {
    const order: string[] = [];
    const hooks: string[] = [];
    const row = await measureRow({
      name: "demo",
      unit: "µs",
      rounds: 3,
      perRound: 2,
      candidates: [
        { name: "a", anchor: true, run: async () => order.push("a") },
        {
          name: "b",
          run: async () => order.push("b"),
          before: async () => hooks.push("before"),
          after: async () => hooks.push("after"),
        },
        {
          name: "broken",
          run: async () => {
            throw new Error("no such thing");
          },
        },
      ],
    });
    // A row of short calls: 6,000 untimed warm-up calls each (these take far less than the 1 s that would cut
    // them short), then rounds: ab, ba, ab (the broken one dropped out at its warm-up).
    const warm = 6000;
    expect(order.join("")).toBe(`${"a".repeat(warm)}${"b".repeat(warm)}aabbbbaaaabb`);
    expect(hooks).toEqual(Array.from({ length: warm + 6 }, () => ["before", "after"]).flat());
    expect(row.failed).toEqual({ broken: "no such thing" });
    expect(Object.keys(row.results)).toEqual(["a", "b"]);
    expect(row.results.a.rounds).toHaveLength(3);
    expect(row.anchors).toEqual(["a"]);
    expect(row.ratios.b.a).toBeCloseTo(row.results.b.median / row.results.a.median, 10);
    // Two calls a round are too few for a 10th percentile.
    expect(row.results.a.p10).toBeUndefined();
  });

  it("warms a burst or byte-moving row up with one call per candidate", async () => {
    for (const kind of [{ burst: true }, { bytes: 1024 }]) {
      let calls = 0;
      await measureRow({
        name: "long calls",
        unit: "ms",
        rounds: 2,
        perRound: 1,
        ...kind,
        candidates: [{ name: "a", run: async () => void calls++ }],
      });
      expect(calls).toBe(1 + 2);
    }
  });

  it("reports the fast calls of a row of many calls: the median of each round's 10th percentile", async () => {
    // Every round: 18 slow calls (a halted vCPU woken) and 2 fast ones; the median is slow, the p10 fast.
    let call = 0;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const row = await measureRow({
      name: "bimodal",
      unit: "ms",
      rounds: 5,
      perRound: 20,
      warmup: false,
      candidates: [{ name: "a", run: () => (call++ % 20 < 2 ? Promise.resolve() : sleep(5)) }],
    });
    expect(row.results.a.median).toBeGreaterThanOrEqual(4);
    expect(row.results.a.p10).toBeLessThan(1);
  });
});

describe("tools/bench.ts --pin", () => {
  it("runs the bench again on the one CPU it names, and says so in the JSON", async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", "tsx", "tools/bench.ts", "--pin", "0", "--quick", "--only", "none", "--json", "-"],
      { cwd: repo, timeout: 60_000 },
    );
    expect(stderr).toContain("--pin 0: every process of this run shares CPU 0");
    const document = JSON.parse(stdout) as { meta: { pinnedToCpu?: string }; rows: RowResult[] };
    expect(document.meta.pinnedToCpu).toBe("0");
    expect(document.rows).toEqual([]);
  });

  it("refuses a CPU that is not a number", async () => {
    const failed = await run(process.execPath, ["--import", "tsx", "tools/bench.ts", "--pin", "first"], {
      cwd: repo,
    }).catch((error: { stderr: string }) => error);
    expect("stderr" in failed ? failed.stderr : "").toContain('--pin needs a CPU number, not "first"');
  });
});

describe("tools/bench.ts --quick --json -", () => {
  it("prints a JSON document with every operation and listing row measured for every candidate", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "tools/bench.ts", "--quick", "--no-ssh", "--only", "ops,list-files", "--json", "-"],
      { cwd: repo, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
    );
    const document = JSON.parse(stdout) as { meta: { quick: boolean }; rows: RowResult[] };
    expect(document.meta.quick).toBe(true);
    // The listing's abort row is there only when the small tree's listing outlasts the 20 ms before the abort.
    expect(document.rows.slice(0, 14).map((row) => row.row)).toEqual([
      "fileInfo",
      "exists",
      "readTextFile 4 KiB",
      "readBinaryFile 4 KiB",
      "writeFile 4 KiB",
      "listDir 1,000",
      'exec(["true"])',
      "hello round trip",
      "writeFile 1 MiB",
      "appendFile 1 MiB",
      "readBinaryFile 1 MiB",
      "100 concurrent fileInfo",
      "20 concurrent exec",
      "listFiles 2,000 files",
    ]);
    for (const row of document.rows.slice(0, 13)) {
      expect(row.failed, row.row).toEqual({});
      const expected = row.row === "hello round trip" ? ["local", "pipe", "echo"] : ["reference", "local", "pipe"];
      for (const name of expected) {
        expect(Number.isFinite(row.results[name]?.median), `${row.row} ${name}`).toBe(true);
        expect(row.results[name].min).toBeLessThanOrEqual(row.results[name].max);
      }
      expect(Object.keys(row.ratios.local ?? {}).length, row.row).toBeGreaterThan(0);
    }
    // The bulk rows also carry the pipe's floor: the same bytes through a spawned `cat`.
    for (const row of document.rows.slice(8, 11)) {
      expect(Number.isFinite(row.results.cat?.median), row.row).toBe(true);
      expect(row.ratios.local.cat, row.row).toBeCloseTo(row.results.local.median / row.results.cat.median, 10);
    }
    expect(document.rows[13].failed).toEqual({});
    expect(Number.isFinite(document.rows[13].results.local.median)).toBe(true);

    // --compare of a run with itself: every candidate of every row, unchanged.
    const dir = await mkdtemp(join(tmpdir(), "outpost-bench-test-"));
    try {
      await writeFile(join(dir, "run.json"), stdout);
      const compared = await run(
        process.execPath,
        ["--import", "tsx", "tools/bench.ts", "--compare", join(dir, "run.json"), join(dir, "run.json")],
        { cwd: repo },
      );
      const lines = compared.stdout.trim().split("\n").slice(1);
      const candidates = document.rows.reduce((sum, row) => sum + Object.keys(row.results).length, 0);
      expect(lines).toHaveLength(candidates);
      for (const line of lines) expect(line).toMatch(/ 1\.00x/);
      expect(compared.stdout).toMatch(/fileInfo \[µs\] +local .* node: (\S+) → \1/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("tools/bench.ts --quick --only pi-grep", () => {
  it("measures pi's grep with every backend and pi's own, and they return the same rows", async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", "tsx", "tools/bench.ts", "--quick", "--no-ssh", "--only", "pi-grep", "--json", "-"],
      { cwd: repo, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
    );
    const document = JSON.parse(stdout) as { rows: RowResult[] };
    expect(document.rows.map((row) => row.row)).toEqual([
      'pi grep 500 files, rare literal "RARE_NEEDLE_4711"',
      `pi grep 500 files, frequent literal, stops at pi's 100 matches "context"`,
    ]);
    for (const row of document.rows) {
      expect(row.failed, row.row).toEqual({});
      expect(Object.keys(row.results), row.row).toEqual(["agent", "rg", "env", "pi"]);
      expect(row.ratios.agent.rg, row.row).toBeCloseTo(row.results.agent.median / row.results.rg.median, 10);
    }
    const counts = [...stderr.matchAll(/^pi grep .*: rows: agent (\d+), rg (\d+), env (\d+), pi (\d+)$/gm)];
    expect(counts.map(([, ...rows]) => rows)).toEqual([
      ["1", "1", "1", "1"],
      ["100", "100", "100", "100"],
    ]);
  }, 120_000);
});
