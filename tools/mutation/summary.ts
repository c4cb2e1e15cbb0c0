/**
 * The summary of a `make mutation` run: for each side, the mutation score and every surviving mutant, from
 * Stryker's JSON report (mutation-testing-report-schema) and gremlins' JSON outputs in the given directory.
 *
 * Score = detected / (detected + survived), where detected is killed or timed out; mutants no test reaches
 * ("no coverage") are counted apart, so the score says how well the code the tests run is checked.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One side's totals and survivors. */
interface Side {
  name: string;
  detected: number;
  survived: string[];
  uncovered: number;
  other: number;
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

function stryker(dir: string): Side | undefined {
  const file = join(dir, "stryker-report.json");
  if (!existsSync(file)) return undefined;
  const report = JSON.parse(readFileSync(file, "utf8")) as StrykerReport;
  const side: Side = { name: "sdk/src (Stryker)", detected: 0, survived: [], uncovered: 0, other: 0 };
  for (const [path, { mutants }] of Object.entries(report.files)) {
    for (const mutant of mutants) {
      const where = `${path}:${mutant.location.start.line}:${mutant.location.start.column}`;
      if (mutant.status === "Killed" || mutant.status === "Timeout") side.detected++;
      else if (mutant.status === "Survived") {
        side.survived.push(`${where} ${mutant.mutatorName} -> ${JSON.stringify(mutant.replacement ?? "")}`);
      } else if (mutant.status === "NoCoverage") side.uncovered++;
      else side.other++;
    }
  }
  return side;
}

function gremlins(dir: string): Side {
  // gremlins writes no report for a package without mutants ("No results to report").
  const files = readdirSync(dir).filter((name) => /^gremlins-.*\.json$/.test(name));
  const side: Side = { name: "agent-go/internal (gremlins)", detected: 0, survived: [], uncovered: 0, other: 0 };
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

function print(side: Side): void {
  const scored = side.detected + side.survived.length;
  const score = scored === 0 ? "n/a" : `${((100 * side.detected) / scored).toFixed(1)}%`;
  console.log(
    `${side.name}: score ${score} (${side.detected} detected, ${side.survived.length} survived; ` +
      `${side.uncovered} not covered, ${side.other} other)`,
  );
  for (const survivor of side.survived) console.log(`  survived: ${survivor}`);
}

// Arguments: the reports' directory, then the sides this run mutated ("stryker", "gremlins").
const [dir = ".cache/mutation", ...ran] = process.argv.slice(2);
const sides = [
  ran.includes("stryker") ? stryker(dir) : undefined,
  ran.includes("gremlins") ? gremlins(dir) : undefined,
];
const found = sides.filter((side): side is Side => side !== undefined);
if (ran.length === 0) console.log("mutation: nothing to mutate (no changed file in scope; ALL=1 takes every file)");
else if (found.length < ran.length) throw new Error(`mutation: a report is missing in ${dir}`);
for (const side of found) print(side);
