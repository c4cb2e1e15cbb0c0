// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are TypeScript source text, templates included
/**
 * The two Stryker plugins of `make mutation`: the ignorer that leaves error messages' text unmutated (which literals
 * it takes, and which it must leave to Stryker), and the reporter that saves results while a run goes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodePath, parseSync, traverse } from "@babel/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { strykerPlugins as checkpointPlugins } from "../mutation/checkpoint-reporter.mjs";
import { messageIgnorer } from "../mutation/message-ignorer.mjs";

/** The source text of every node the ignorer ignores in `code` (outermost only: Stryker skips what is below). */
function ignored(code: string): string[] {
  const ast = parseSync(code, { filename: "x.ts", presets: [], configFile: false, babelrc: false });
  const found: string[] = [];
  traverse(ast as never, {
    enter(path: NodePath) {
      if (messageIgnorer.shouldIgnore(path)) {
        found.push(code.slice(path.node.start ?? 0, path.node.end ?? 0));
        path.skip();
      }
    },
  });
  return found;
}

describe("the error-messages ignorer", () => {
  it("takes the text of messages given to error constructors and *Error functions", () => {
    expect(ignored("throw new Error(`No agent for ${name} at ${path}`);")).toEqual([
      "`No agent for ${name} at ${path}`",
    ]);
    expect(ignored('new ExecutionError("timeout", "Invalid timeout: must be finite");')).toEqual([
      '"Invalid timeout: must be finite"',
    ]);
    expect(ignored('lostError("outpost agent connection lost", "spawn_error");')).toEqual([
      '"outpost agent connection lost"',
    ]);
    expect(ignored('new RangeError("bad: " + value + " here");')).toEqual(['"bad: " + value + " here"']);
    expect(ignored('new RemoteError({ code: "unknown", message: "went wrong" });')).toEqual(['"went wrong"']);
    expect(ignored("const message = `The argument '${argument}' must be a string`;")).toEqual([
      "`The argument '${argument}' must be a string`",
    ]);
    expect(ignored('const ABORTED_MESSAGE = "The operation was aborted";')).toEqual(['"The operation was aborted"']);
  });

  it("leaves codes, op names and every other string to Stryker", () => {
    expect(ignored('new ExecutionError("aborted", "aborted");')).toEqual([]);
    expect(ignored('new FileError("not_found", message, path);')).toEqual([]);
    expect(ignored('fileErrorCode("ENOENT");')).toEqual([]);
    expect(ignored('connection.request("lstat", { path: "a b" });')).toEqual([]);
    expect(ignored('const op = "readFile" + suffix;')).toEqual([]);
    expect(ignored("lostError(a === b);")).toEqual([]);
    expect(ignored('const label = `exit ${code}`; toFileError(thrown, "some path");')).toEqual([]);
  });
});

describe("the checkpoint reporter", () => {
  let dir: string | undefined;
  afterEach(() => {
    vi.unstubAllEnvs();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** A reporter writing to `file`, with checkpoints after every result. */
  function reporter(file: string) {
    vi.stubEnv("OUTPOST_CHECKPOINT_MS", "1");
    const plugin = checkpointPlugins[0] as unknown as {
      injectableClass: new (options: unknown, log: unknown) => Record<string, (event: unknown) => void>;
    };
    return new plugin.injectableClass({ incremental: true, incrementalFile: file }, { info() {} });
  }

  const mutant = (id: string, status: string, more: Record<string, unknown> = {}) => ({
    id,
    fileName: join(process.cwd(), "sdk/src/contract/paths.ts"),
    mutatorName: "EqualityOperator",
    replacement: "a >= b",
    location: { start: { line: 3, column: 5 }, end: { line: 3, column: 11 } },
    status,
    static: false,
    testsCompleted: 2,
    ...more,
  });

  it("saves Stryker's incremental format as results arrive, tests renumbered", async () => {
    dir = mkdtempSync(join(tmpdir(), "outpost-checkpoint-"));
    const file = join(dir, "incremental.json");
    const saving = reporter(file);
    saving.onDryRunCompleted({
      result: {
        tests: [
          { id: "long id one", name: "one", fileName: join(process.cwd(), "sdk/test/paths.test.ts") },
          {
            id: "long id two",
            name: "two",
            fileName: join(process.cwd(), "sdk/test/paths.test.ts"),
            startPosition: { line: 9, column: 2 },
          },
        ],
      },
    });
    saving.onMutantTested(
      mutant("1", "Killed", { killedBy: ["long id two"], coveredBy: ["long id one", "long id two"] }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    saving.onMutantTested(mutant("2", "Survived", { coveredBy: ["long id one", "long id two"] }));
    const report = JSON.parse(readFileSync(file, "utf8"));
    expect(report.files["sdk/src/contract/paths.ts"].source).toBe(readFileSync("sdk/src/contract/paths.ts", "utf8"));
    expect(report.files["sdk/src/contract/paths.ts"].mutants).toMatchObject([
      { id: "1", status: "Killed", killedBy: ["1"], location: { start: { line: 3, column: 5 } } },
      { id: "2", status: "Survived", coveredBy: ["0", "1"] },
    ]);
    // A killed mutant is reused while its killing test is unchanged; its covering tests are not needed.
    expect(report.files["sdk/src/contract/paths.ts"].mutants[0]).not.toHaveProperty("coveredBy");
    expect(report.testFiles["sdk/test/paths.test.ts"].tests).toEqual([
      { id: "0", name: "one" },
      { id: "1", name: "two", location: { start: { line: 10, column: 3 } } },
    ]);

    // After the report is ready, Stryker writes the file itself: nothing of ours lands after it.
    saving.onMutationTestReportReady({});
    writeFileSync(file, "stryker's own");
    await new Promise((resolve) => setTimeout(resolve, 5));
    saving.onMutantTested(mutant("3", "Survived"));
    expect(readFileSync(file, "utf8")).toBe("stryker's own");
  });

  /**
   * Starts a reporter on a file of `held` results (the plan, if given, announced), then reports two results with a
   * checkpoint due at each, and returns how many results the file held after each of them.
   */
  async function savedAfterTwoResults(held: number, plans?: string[]): Promise<[number, number]> {
    dir = mkdtempSync(join(tmpdir(), "outpost-checkpoint-"));
    const file = join(dir, "incremental.json");
    writeFileSync(
      file,
      JSON.stringify({ files: { "sdk/src/contract/paths.ts": { mutants: Array.from({ length: held }, () => ({})) } } }),
    );
    const saving = reporter(file);
    saving.onDryRunCompleted({ result: { tests: [] } });
    if (plans) saving.onMutationTestingPlanReady({ mutantPlans: plans.map((plan) => ({ plan })) });
    const counts: number[] = [];
    for (const [id, status] of [
      ["1", "Killed"],
      ["2", "Survived"],
    ]) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      saving.onMutantTested(mutant(id, status));
      counts.push(JSON.parse(readFileSync(file, "utf8")).files["sdk/src/contract/paths.ts"].mutants.length);
    }
    return counts as [number, number];
  }

  it("saves nothing until Stryker's early results have all arrived", async () => {
    // Two results are reused; the third result the file held is tested again, with one new mutant.
    expect(await savedAfterTwoResults(3, ["EarlyResult", "EarlyResult", "Run", "Run"])).toEqual([3, 2]);
  });

  it("without Stryker's plan, never saves fewer results than the file held when the run started", async () => {
    expect(await savedAfterTwoResults(2)).toEqual([2, 2]);
  });
});
