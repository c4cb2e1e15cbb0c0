/**
 * Sharding: the parts of a budget add up to the whole, no two shards share a seed, bad SHARD values are refused,
 * and the harness applies its shard to runs, time and seed and records its totals for the summary.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseShard, shardRuns, shardSeed, WHOLE } from "./shard.js";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
  vi.restoreAllMocks();
});

describe("shards", () => {
  it("split every budget into parts that add up to it and differ by at most one", () => {
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.integer({ min: 1, max: 64 }), (total, count) => {
        const parts = Array.from({ length: count }, (_, i) => shardRuns(total, { index: i + 1, count }));
        expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
        expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1);
      }),
      { seed: 1, numRuns: 500 },
    );
    expect(shardRuns(300, { index: 1, count: 4 })).toBe(75);
    expect(shardRuns(7, WHOLE)).toBe(7);
  });

  it("give every shard of a run its own seed, and the whole run the base seed itself", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 256 }),
        (base, count) => {
          const seeds = new Set(Array.from({ length: count }, (_, i) => shardSeed(base, { index: i + 1, count })));
          expect(seeds.size).toBe(count);
          for (const seed of seeds) expect(Number.isSafeInteger(seed) && seed === (seed | 0)).toBe(true);
          expect(shardSeed(base, WHOLE)).toBe(base);
        },
      ),
      { seed: 2, numRuns: 300 },
    );
  });

  it("accept i/N and refuse anything else with a message naming the value", () => {
    expect(parseShard(undefined)).toEqual(WHOLE);
    expect(parseShard("")).toEqual(WHOLE);
    expect(parseShard("3/4")).toEqual({ index: 3, count: 4 });
    expect(() => parseShard("0/4")).toThrow("SHARD 0/4: i must be between 1 and 4");
    expect(() => parseShard("5/4")).toThrow("SHARD 5/4: i must be between 1 and 4");
    expect(() => parseShard("1/0")).toThrow("SHARD 1/0: N must be between 1 and 1000");
    expect(() => parseShard("two/4")).toThrow('SHARD must look like i/N (e.g. 1/4), got "two/4"');
    expect(() => parseShard("1/4/2")).toThrow("SHARD must look like i/N");
  });
});

describe("the harness in a shard", () => {
  async function harnessWith(env: Record<string, string>): Promise<typeof import("./harness.js")> {
    // Independent of the variables of the run these tests are part of (a nightly shard sets them too).
    vi.stubEnv("OUTPOST_PROP_REPORT", "");
    vi.stubEnv("NUM_RUNS_SCALE", "1");
    for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
    vi.resetModules();
    return import("./harness.js");
  }

  it("does its part of the scaled runs and time, from its own seed", async () => {
    const harness = await harnessWith({ NUM_RUNS_SCALE: "50", OUTPOST_PROP_SHARD: "2/3", OUTPOST_PROP_SEED: "12345" });
    expect(harness.BASE_SEED).toBe(12345);
    expect(harness.SEED).toBe(shardSeed(12345, { index: 2, count: 3 }));
    expect(harness.SEED).not.toBe(12345);
    expect(harness.numRuns(300)).toBe(shardRuns(15_000, { index: 2, count: 3 }));
    expect(harness.testTimeout(3000, 0)).toBe(50_000);
  });

  it("records each property's totals as a JSON line for the summary, and runs nothing when its part is empty", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outpost-shard-"));
    try {
      const file = join(dir, "report.jsonl");
      const harness = await harnessWith({
        OUTPOST_PROP_SHARD: "3/4",
        OUTPOST_PROP_SEED: "7",
        OUTPOST_PROP_REPORT: file,
      });
      vi.spyOn(console, "log").mockImplementation(() => {});
      let executed = 0;
      const property = fc.asyncProperty(fc.nat(), async () => {
        executed += 1;
      });
      await harness.checkProperty(property, { name: "some", numRuns: harness.numRuns(10), timeLimitMs: 20_000 });
      await harness.checkProperty(property, { name: "none", numRuns: harness.numRuns(1), timeLimitMs: 20_000 });
      expect(executed).toBe(shardRuns(10, { index: 3, count: 4 }));
      const lines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines).toEqual([
        expect.objectContaining({ name: "some", shard: "3/4", baseSeed: 7, runs: 2, requested: 2, passed: true }),
        expect.objectContaining({ name: "none", shard: "3/4", baseSeed: 7, runs: 0, requested: 0, passed: true }),
      ]);
      // Shard 3 of 4 of a one-run budget is empty: some other shard does that run.
      expect(shardRuns(1, { index: 4, count: 4 })).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
