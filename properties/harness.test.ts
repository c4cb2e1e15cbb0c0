/**
 * The harness's budget rule and totals: a scaled-up run (NUM_RUNS_SCALE > 1) that the time limit cuts below half
 * of its runs fails; at the CI scale it only logs; every property prints `N runs[, M operations]`.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";

/**
 * The harness module as loaded with `NUM_RUNS_SCALE=scale` (it reads the variable once, at load), unsharded and
 * recording nothing (these checks must not reach a nightly run's report).
 */
async function harnessAt(scale: string): Promise<typeof import("./harness.js")> {
  vi.stubEnv("NUM_RUNS_SCALE", scale);
  vi.stubEnv("OUTPOST_PROP_SHARD", "");
  vi.stubEnv("OUTPOST_PROP_REPORT", "");
  vi.resetModules();
  return import("./harness.js");
}

/** A property whose every run takes `ms` and counts `perRun` operations into `counter`. */
function slowProperty(ms: number, counter: { value: number }, perRun = 1) {
  return fc.asyncProperty(fc.nat(), async () => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    counter.value += perRun;
  });
}

/** The `[properties]` lines `run` logs. */
async function logsOf(run: () => Promise<void>): Promise<string[]> {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  try {
    await run();
    return log.mock.calls.map((call) => String(call[0])).filter((line) => line.startsWith("[properties]"));
  } finally {
    log.mockRestore();
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
  vi.restoreAllMocks();
});

describe("property harness", () => {
  it("fails a scaled-up property the time limit cuts below half of its runs", async () => {
    const harness = await harnessAt("2");
    expect(harness.NUM_RUNS_SCALE).toBe(2);
    const counter = { value: 0 };
    const check = harness.checkProperty(slowProperty(20, counter), { name: "short", numRuns: 1000, timeLimitMs: 300 });
    await expect(check).rejects.toThrow(/short: only \d+ of 1000 runs completed within the time limit/);
    expect(counter.value).toBeGreaterThan(0);
    expect(counter.value).toBeLessThan(500);
  });

  it("accepts a scaled-up property that completes at least half of its runs", async () => {
    const harness = await harnessAt("2");
    const counter = { value: 0 };
    const lines = await logsOf(() =>
      harness.checkProperty(slowProperty(0, counter), { name: "enough", numRuns: 40, timeLimitMs: 20_000 }),
    );
    expect(counter.value).toBe(40);
    expect(lines).toContain("[properties] enough: 40 runs");
  });

  it("only logs a short run at the CI scale", async () => {
    const harness = await harnessAt("1");
    const counter = { value: 0 };
    const lines = await logsOf(() =>
      harness.checkProperty(slowProperty(20, counter), { name: "ci", numRuns: 1000, timeLimitMs: 300 }),
    );
    const completed = counter.value;
    expect(completed).toBeLessThan(500);
    expect(lines).toContain(`[properties] ci: ${completed} runs`);
    expect(lines).toContain(
      `[properties] ci: only ${completed} of 1000 runs completed within the time limit ` +
        "(under 50%, NUM_RUNS_SCALE=1); not a failure at this scale",
    );
  });

  it("prints the operations a property executed during its check", async () => {
    const harness = await harnessAt("1");
    const counter = { value: 7 }; // counted before the check: not part of its total
    const lines = await logsOf(() =>
      harness.checkProperty(slowProperty(0, counter, 3), {
        name: "ops",
        numRuns: 25,
        timeLimitMs: 20_000,
        operations: () => counter.value,
      }),
    );
    expect(lines).toContain("[properties] ops: 25 runs, 75 operations");
  });

  it("holds only interrupted runs to the budget", async () => {
    const { budgetShortfall } = await harnessAt("1");
    expect(budgetShortfall("p", 10, 100, false, 50)).toBeUndefined();
    expect(budgetShortfall("p", 50, 100, true, 50)).toBeUndefined();
    expect(budgetShortfall("p", 49, 100, true, 50)).toBe(
      "p: only 49 of 100 runs completed within the time limit (under 50%, NUM_RUNS_SCALE=50)",
    );
  });
});
