/**
 * Merges the `OUTPOST_PROP_REPORT` files of a sharded nightly run into one verdict per property: the shards' runs and
 * operations added up, every shard of 1..N accounted for, every shard passed.
 */
import type { PropertyReport } from "./harness.js";

/** One property over all shards. */
export interface PropertySummary {
  name: string;
  shards: number;
  requested: number;
  runs: number;
  operations?: number;
  passed: boolean;
  problems: string[];
}

/** The merged run. */
export interface RunSummary {
  properties: PropertySummary[];
  passed: boolean;
}

/** Parses JSON lines as written by the harness; a malformed line throws with its position. */
export function parseReports(text: string, source: string): PropertyReport[] {
  return text
    .split("\n")
    .map((line, index) => ({ line: line.trim(), index }))
    .filter(({ line }) => line !== "")
    .map(({ line, index }) => {
      try {
        return JSON.parse(line) as PropertyReport;
      } catch (error) {
        throw new Error(`${source}:${index + 1}: not a JSON report line (${(error as Error).message})`);
      }
    });
}

/** Merges reports of shards `1/N … N/N`; a property missing a shard, or seen twice in one, is a problem. */
export function summarize(reports: PropertyReport[]): RunSummary {
  const byName = new Map<string, PropertyReport[]>();
  for (const report of reports) byName.set(report.name, [...(byName.get(report.name) ?? []), report]);
  const properties = [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, entries]) => summarizeOne(name, entries));
  return { properties, passed: properties.length > 0 && properties.every((p) => p.passed) };
}

function summarizeOne(name: string, entries: PropertyReport[]): PropertySummary {
  const problems: string[] = [];
  const counts = new Set(entries.map((e) => Number(e.shard.split("/")[1])));
  if (counts.size !== 1) problems.push(`reports from runs of different shard counts: ${[...counts].join(", ")}`);
  const count = Math.max(...counts);
  const seen = new Map<string, number>();
  for (const entry of entries) seen.set(entry.shard, (seen.get(entry.shard) ?? 0) + 1);
  for (let index = 1; index <= count; index++) {
    const times = seen.get(`${index}/${count}`) ?? 0;
    if (times === 0) problems.push(`shard ${index}/${count} reported nothing`);
    if (times > 1) problems.push(`shard ${index}/${count} reported ${times} times`);
  }
  for (const entry of entries.filter((e) => !e.passed))
    problems.push(`shard ${entry.shard} failed (seed ${entry.seed})`);
  const operations = entries.every((e) => e.operations === undefined)
    ? undefined
    : entries.reduce((sum, e) => sum + (e.operations ?? 0), 0);
  return {
    name,
    shards: seen.size,
    requested: entries.reduce((sum, e) => sum + e.requested, 0),
    runs: entries.reduce((sum, e) => sum + e.runs, 0),
    ...(operations === undefined ? {} : { operations }),
    passed: problems.length === 0,
    problems,
  };
}

/** A plain-text table of the merged run, one line per property, problems indented below it. */
export function formatSummary(summary: RunSummary): string {
  const lines = summary.properties.flatMap((p) => [
    `${p.passed ? "ok  " : "FAIL"} ${p.name}: ${p.runs}/${p.requested} runs` +
      `${p.operations === undefined ? "" : `, ${p.operations} operations`} over ${p.shards} shard(s)`,
    ...p.problems.map((problem) => `       ${problem}`),
  ]);
  if (summary.properties.length === 0) lines.push("FAIL no property reported anything");
  lines.push(summary.passed ? "nightly: all properties passed" : "nightly: FAILED");
  return lines.join("\n");
}
