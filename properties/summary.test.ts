/** The nightly summary: shards add up, a missing, repeated or failed shard fails the whole run. */
import { describe, expect, it } from "vitest";
import type { PropertyReport } from "./harness.js";
import { formatSummary, parseReports, summarize } from "./summary.js";

function report(name: string, shard: string, runs: number, passed = true, operations?: number): PropertyReport {
  return {
    name,
    shard,
    baseSeed: 1,
    seed: 100 + Number(shard[0]),
    scale: 50,
    requested: runs,
    runs,
    ...(operations === undefined ? {} : { operations }),
    passed,
    interrupted: false,
  };
}

describe("nightly summary", () => {
  it("adds up the runs and operations of all shards", () => {
    const summary = summarize([report("seq", "1/2", 75, true, 1000), report("seq", "2/2", 75, true, 1200)]);
    expect(summary.passed).toBe(true);
    expect(summary.properties).toEqual([
      { name: "seq", shards: 2, requested: 150, runs: 150, operations: 2200, passed: true, problems: [] },
    ]);
    expect(formatSummary(summary)).toBe(
      "ok   seq: 150/150 runs, 2200 operations over 2 shard(s)\nnightly: all properties passed",
    );
  });

  it("fails on a missing, repeated or failed shard", () => {
    const summary = summarize([
      report("a", "1/3", 5),
      report("a", "3/3", 5),
      report("b", "1/2", 5),
      report("b", "1/2", 5),
      report("b", "2/2", 5, false),
    ]);
    expect(summary.passed).toBe(false);
    expect(summary.properties.map((p) => p.problems)).toEqual([
      ["shard 2/3 reported nothing"],
      ["shard 1/2 reported 2 times", "shard 2/2 failed (seed 102)"],
    ]);
  });

  it("fails an empty run and names a malformed line", () => {
    expect(summarize([]).passed).toBe(false);
    expect(() => parseReports('{"name":"a"}\nnot json\n', "r.jsonl")).toThrow(/^r\.jsonl:2: not a JSON report line/);
  });
});
