// A Stryker reporter that saves the results of a run while it goes, so a run can be stopped and resumed.
//
// Stryker writes its incremental file (the results it reuses next time) only when a run completes, and a full run
// of sdk/src takes longer than a working session here. This reporter writes the same file, in the same format
// (mutation-testing-report-schema, as Stryker's incremental mode reads it), every 30 s while mutants are
// tested: a stopped run loses at most that much, and the next run reuses every result saved, testing only the rest.
// When the run completes, Stryker writes the file itself (after onMutationTestReportReady), and the reporter stops.
//
// Kept per mutant: what Stryker's incremental diff needs to reuse a result — file, mutator, replacement and
// location; the status; the killing tests; the covering tests of a mutant that was not killed (a new covering test
// makes Stryker test it again). Tests are renumbered as Stryker's own report does, to keep the file small.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { commonTokens, declareClassPlugin, PluginKind } from "@stryker-mutator/api/plugin";

/** How often results are saved; OUTPOST_CHECKPOINT_MS overrides it (the reporter's tests). */
const CHECKPOINT_MS = 30_000;

class CheckpointReporter {
  static inject = [commonTokens.options, commonTokens.logger];

  #file;
  #log;
  #interval = Number(process.env.OUTPOST_CHECKPOINT_MS) || CHECKPOINT_MS;
  /** Test id → { number, name, file, start }. */
  #tests = new Map();
  /** Relative source file → its mutant results (schema format). */
  #mutants = new Map();
  /** Relative file → its contents when first seen (the run's sources, whatever happens to the files later). */
  #sources = new Map();
  #lastWrite = Date.now();
  #finished = false;
  /**
   * How many results arrive before the first mutant is tested (Stryker's early results: those reused from the file,
   * ignored, not covered, and those of files outside the run's scope, which Stryker carries over). Until all of
   * them have arrived a checkpoint would lose some, so none is written. Until Stryker's plan says how many there
   * are, the number of results the file holds stands in for it.
   */
  #early = 0;

  constructor(options, log) {
    this.#file = options.incremental ? options.incrementalFile : undefined;
    this.#log = log;
    if (this.#file) this.#early = savedResults(this.#file);
  }

  onMutationTestingPlanReady({ mutantPlans }) {
    // Results the file held that are not early ones are being tested again: the new results replace them.
    this.#early = mutantPlans.filter((plan) => plan.plan === "EarlyResult").length;
  }

  onDryRunCompleted({ result }) {
    for (const test of result.tests) this.#addTest(test.id, test.name, test.fileName, test.startPosition);
  }

  onMutantTested(result) {
    if (!this.#file || this.#finished) return;
    const file = relative(process.cwd(), result.fileName);
    let list = this.#mutants.get(file);
    if (!list) {
      list = [];
      this.#mutants.set(file, list);
    }
    const killed = result.status === "Killed";
    list.push({
      id: String(result.id),
      mutatorName: result.mutatorName,
      replacement: result.replacement,
      location: result.location,
      status: result.status,
      statusReason: result.statusReason,
      static: result.static,
      testsCompleted: result.testsCompleted,
      killedBy: this.#numbers(result.killedBy),
      coveredBy: killed ? undefined : this.#numbers(result.coveredBy),
    });
    if (Date.now() - this.#lastWrite >= this.#interval) this.#write();
  }

  onMutationTestReportReady() {
    // Stryker writes the complete file next; nothing of ours may land after it.
    this.#finished = true;
  }

  #addTest(id, name, fileName, start) {
    if (this.#tests.has(id)) return;
    this.#tests.set(id, {
      number: String(this.#tests.size),
      name,
      file: fileName ? relative(process.cwd(), fileName) : "",
      // Stryker's positions are 0-based; the report's are 1-based.
      start: start ? { line: start.line + 1, column: start.column + 1 } : undefined,
    });
  }

  #source(file) {
    let source = this.#sources.get(file);
    if (source === undefined) {
      source = readFileSync(file, "utf8");
      this.#sources.set(file, source);
    }
    return source;
  }

  #numbers(ids) {
    return ids?.map((id) => this.#tests.get(id)?.number).filter((number) => number !== undefined);
  }

  #write() {
    this.#lastWrite = Date.now();
    const count = [...this.#mutants.values()].reduce((sum, list) => sum + list.length, 0);
    if (count < this.#early) return;
    const files = {};
    for (const [file, mutants] of this.#mutants) {
      files[file] = { language: "typescript", source: this.#source(file), mutants };
    }
    const testFiles = {};
    for (const test of this.#tests.values()) {
      let entry = testFiles[test.file];
      if (!entry) {
        entry = { source: test.file ? this.#source(test.file) : undefined, tests: [] };
        testFiles[test.file] = entry;
      }
      entry.tests.push({ id: test.number, name: test.name, location: test.start && { start: test.start } });
    }
    const report = { schemaVersion: "1.0", thresholds: { high: 80, low: 60 }, files, testFiles };
    const temporary = `${this.#file}.partial`;
    writeFileSync(temporary, JSON.stringify(report));
    renameSync(temporary, this.#file);
    this.#log.info(`checkpoint: ${count} mutant result(s) saved to ${this.#file}`);
  }
}

/** The number of mutant results in an incremental file; 0 when there is none or it cannot be read. */
function savedResults(file) {
  try {
    const report = JSON.parse(readFileSync(file, "utf8"));
    return Object.values(report.files ?? {}).reduce((sum, entry) => sum + (entry.mutants?.length ?? 0), 0);
  } catch {
    return 0;
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, "checkpoint", CheckpointReporter)];
