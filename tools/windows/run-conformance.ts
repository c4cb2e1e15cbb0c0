/**
 * Runs the conformance suite's Windows flavour on one target inside Wine's `node.exe` and writes every case's
 * outcome to a JSON file (Wine's `node.exe` cannot write to a Linux pipe, so results come back through a file).
 *
 *   node.exe run-conformance.mjs <reference|agent> <results.json> <agent.exe> <bash.exe> [<only-cases.json>]
 *
 * `reference` runs the in-process `NodeExecutionEnv`; `agent` runs `RemoteExecutionEnv` over one Windows agent
 * started by the SDK. `only-cases.json`, when given, lists the case names to run (the rerun of disagreements).
 * The variable TEST_WINDOWS_CASES (a regular expression, passed through Wine) runs only the cases whose names
 * match it, for iterating on a few cases by hand; TEST_WINDOWS_EXCLUDED=1 runs the excluded cases too (to see
 * whether their reasons still hold).
 * Bundled by `tools/windows/test-windows.sh` with esbuild, since Windows Node runs plain JavaScript only.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, type ExecutionEnv, RemoteExecutionEnv } from "@outpost/sdk";
import { createConformanceCases, type EnvSettings } from "@outpost/spec/conformance";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { excludedPrefixes, exclusionOf, exclusions } from "./excluded.js";

/** One case's outcome, as the comparison reads it. */
interface Outcome {
  name: string;
  rule?: string;
  ok: boolean;
  error?: string;
  ms: number;
}

const [targetName, resultsPath, agentPath, bashPath, onlyPath] = process.argv.slice(2);
if (!targetName || !resultsPath || !agentPath || !bashPath) {
  throw new Error("usage: run-conformance <reference|agent> <results.json> <agent.exe> <bash.exe> [<only.json>]");
}
const only = onlyPath ? new Set<string>(JSON.parse(readFileSync(onlyPath, "utf8"))) : undefined;
const pattern = process.env.TEST_WINDOWS_CASES ? new RegExp(process.env.TEST_WINDOWS_CASES) : undefined;

// Every env's temp files (and the agent's, which inherits the variables) land inside the sandbox.
const sandbox = realpathSync(mkdtempSync(join(tmpdir(), "outpost-windows-")));
const sandboxTmp = join(sandbox, "tmp");
mkdirSync(sandboxTmp);
process.env.TEMP = sandboxTmp;
process.env.TMP = sandboxTmp;

let connection: Connection | undefined;

function envFor(cwd: string, settings: EnvSettings | undefined): ExecutionEnv & { close?: () => Promise<void> } {
  // The watch cases force a mode, a poll interval and a directory budget through settings.watch.
  const options = { cwd, shellPath: settings?.shellPath, shellEnv: settings?.shellEnv, watch: settings?.watch };
  if (targetName === "reference") return new NodeExecutionEnv(options);
  connection ??= new Connection({ command: [agentPath] });
  return new RemoteExecutionEnv({ connection, id: "outpost:windows", ...options });
}

async function withEnv(use: (env: ExecutionEnv) => Promise<void>, settings?: EnvSettings): Promise<void> {
  const cwd = await mkdtemp(join(sandbox, "case-"));
  const env = envFor(cwd, settings);
  try {
    await use(env);
  } finally {
    await env.cleanup({ abortSignal: undefined });
    try {
      await rm(cwd, { recursive: true, force: true, maxRetries: 5 });
    } catch (error) {
      // Wine keeps the old name of a directory renamed while open, and refuses to remove it (EBUSY): that is
      // the harness's leftover, not the case's outcome; the sandbox goes at the end.
      console.log(`case directory ${cwd} not removed: ${String(error)}`);
    }
  }
}

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setTimeout(() => reject(new Error(`case timed out after ${ms} ms`)), ms);
    timer.unref();
  });
}

async function main(): Promise<void> {
  const cases = createConformanceCases({
    withEnv,
    shell: [bashPath, "-c"],
    symlinks: false,
    fifos: false,
    nonUtf8Names: false,
    linux: false,
    windows: true,
  });
  const outcomes: Outcome[] = [];
  const excluded: { name: string; rule: string; reason: string }[] = [];
  const stale = [
    ...exclusions.filter((exclusion) => !cases.some((testCase) => testCase.name === exclusion.name)),
    ...excludedPrefixes.filter((exclusion) => !cases.some((testCase) => testCase.name.startsWith(exclusion.prefix))),
  ];
  if (stale.length > 0) throw new Error(`exclusions that match no case: ${JSON.stringify(stale)}`);
  for (const testCase of cases) {
    if (only && !only.has(testCase.name)) continue;
    if (pattern && !pattern.test(testCase.name)) continue;
    if (testCase.skip !== undefined) {
      // Not applicable to either target (e.g. listFiles on the reference): reported, never compared as a pass.
      console.log(`skipped: ${testCase.name} (${testCase.skip})`);
      continue;
    }
    const exclusion = process.env.TEST_WINDOWS_EXCLUDED === "1" ? undefined : exclusionOf(testCase.name);
    if (exclusion) {
      excluded.push({ name: testCase.name, rule: testCase.rule ?? exclusion.rule, reason: exclusion.reason });
      continue;
    }
    const started = Date.now();
    const outcome: Outcome = { name: testCase.name, rule: testCase.rule, ok: true, ms: 0 };
    try {
      await Promise.race([testCase.run(), timeout(testCase.timeoutMs ?? 15_000)]);
    } catch (error) {
      outcome.ok = false;
      outcome.error = error instanceof Error ? error.message : String(error);
    }
    outcome.ms = Date.now() - started;
    outcomes.push(outcome);
    // Written after every case, so a crash still leaves what ran.
    writeFileSync(resultsPath, JSON.stringify({ target: targetName, done: false, outcomes, excluded }, null, 1));
  }
  writeFileSync(resultsPath, JSON.stringify({ target: targetName, done: true, outcomes, excluded }, null, 1));
  await connection?.close();
  try {
    rmSync(sandbox, { recursive: true, force: true, maxRetries: 5 });
  } catch (error) {
    // A process of a timed-out case may still hold a directory: the results are written, so only say so.
    console.log(`sandbox ${sandbox} not removed: ${String(error)}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    writeFileSync(`${resultsPath}.crash`, String(error instanceof Error ? error.stack : error));
    process.exit(1);
  },
);
