/**
 * The summary of a `make mutation` run: for each side, the mutation score and every surviving mutant, from
 * Stryker's JSON report (mutation-testing-report-schema) and gremlins' JSON outputs in the given directory.
 *
 * Score = detected / (detected + survived), where detected is killed or timed out; mutants no test reaches
 * ("no coverage") are counted apart, so the score says how well the code the tests run is checked. Mutants an
 * ignorer left out (error messages' text, see message-ignorer.mjs) count as "ignored".
 *
 * The side "stryker-saved" reads Stryker's incremental file instead of its report: the results saved so far by a
 * run that is still going or was stopped (checkpoint-reporter.mjs), or by the last complete run.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One side's totals and survivors. */
interface Side {
  name: string;
  detected: number;
  survived: string[];
  uncovered: number;
  ignored: number;
  other: number;
  /** Per file: detected and survived (Stryker only). */
  files?: Map<string, { detected: number; survived: number }>;
}

interface StrykerMutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number } };
}

interface StrykerReport {
  files: Record<string, { mutants: StrykerMutant[] }>;
}

interface GremlinsReport {
  files: { file_name: string; mutations: { type: string; status: string; line: number; column: number }[] }[];
}

function stryker(dir: string, reportName: string, only: Set<string> | undefined): Side | undefined {
  const file = join(dir, reportName);
  if (!existsSync(file)) return undefined;
  const report = JSON.parse(readFileSync(file, "utf8")) as StrykerReport;
  const side: Side = {
    name: reportName === "stryker-report.json" ? "sdk/src (Stryker)" : `sdk/src (Stryker, saved in ${reportName})`,
    detected: 0,
    survived: [],
    uncovered: 0,
    ignored: 0,
    other: 0,
    files: new Map(),
  };
  for (const [path, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    if (only && !only.has(path)) continue;
    const perFile = { detected: 0, survived: 0 };
    side.files?.set(path, perFile);
    for (const mutant of mutants) {
      const where = `${path}:${mutant.location.start.line}:${mutant.location.start.column}`;
      if (mutant.status === "Killed" || mutant.status === "Timeout") {
        side.detected++;
        perFile.detected++;
      } else if (mutant.status === "Survived") {
        side.survived.push(`${where} ${mutant.mutatorName} -> ${JSON.stringify(mutant.replacement ?? "")}`);
        perFile.survived++;
      } else if (mutant.status === "NoCoverage") side.uncovered++;
      else if (mutant.status === "Ignored") side.ignored++;
      else side.other++;
    }
  }
  return side;
}

function gremlins(dir: string): Side {
  // gremlins writes no report for a package without mutants ("No results to report").
  const files = readdirSync(dir).filter((name) => /^gremlins-.*\.json$/.test(name));
  const side: Side = {
    name: "agent-go/internal (gremlins)",
    detected: 0,
    survived: [],
    uncovered: 0,
    ignored: 0,
    other: 0,
  };
  for (const name of files.sort()) {
    const report = JSON.parse(readFileSync(join(dir, name), "utf8")) as GremlinsReport;
    // gremlins-<package>.json, "/" in the package path as "__"; gremlins names files relative to the package.
    const pkg = name.slice("gremlins-".length, -".json".length).replaceAll("__", "/");
    for (const file of report.files ?? []) {
      for (const mutation of file.mutations ?? []) {
        const where = `agent-go/internal/${pkg}/${file.file_name}:${mutation.line}:${mutation.column}`;
        if (mutation.status === "KILLED" || mutation.status === "TIMED OUT") side.detected++;
        else if (mutation.status === "LIVED") side.survived.push(`${where} ${mutation.type}`);
        else if (mutation.status === "NOT COVERED") side.uncovered++;
        else side.other++;
      }
    }
  }
  return side;
}

function percent(detected: number, survived: number): string {
  return detected + survived === 0 ? "n/a" : `${((100 * detected) / (detected + survived)).toFixed(1)}%`;
}

function print(side: Side): void {
  console.log(
    `${side.name}: score ${percent(side.detected, side.survived.length)} (${side.detected} detected, ` +
      `${side.survived.length} survived; ${side.uncovered} not covered, ${side.ignored} ignored, ${side.other} other)`,
  );
  for (const [path, { detected, survived }] of side.files ?? []) {
    console.log(`  ${path}: ${percent(detected, survived)} (${detected} detected, ${survived} survived)`);
  }
  for (const survivor of side.survived) console.log(`  survived: ${survivor}`);
}

// Arguments: the reports' directory, then the sides this run mutated ("stryker", "gremlins"; or "stryker-saved"),
// then optionally `--files a.ts,b.ts`: the Stryker results of only these files.
const args = process.argv.slice(2);
const filesAt = args.indexOf("--files");
const only = filesAt < 0 ? undefined : new Set(args.splice(filesAt, 2)[1]?.split(",").filter(Boolean));
const [dir = ".cache/mutation", ...ran] = args;
const sides = [
  ran.includes("stryker") ? stryker(dir, "stryker-report.json", only) : undefined,
  ran.includes("stryker-saved") ? stryker(dir, "stryker-incremental.json", only) : undefined,
  ran.includes("gremlins") ? gremlins(dir) : undefined,
];
const found = sides.filter((side): side is Side => side !== undefined);
if (ran.length === 0) console.log("mutation: nothing to mutate (no changed file in scope; ALL=1 takes every file)");
else if (found.length < ran.length) throw new Error(`mutation: a report is missing in ${dir}`);
for (const side of found) print(side);
