/**
 * Compares the Windows conformance results of the reference and the agent (files written by
 * run-conformance.ts) and lists the cases that do not pass on both: one passes and the other fails, both fail,
 * or a case ran on one target only. Excluded cases (tools/windows/excluded.ts) are listed with their reasons.
 *
 *   tsx compare.ts <reference.json> <agent.json> <disagreements.json>     first run: writes the disagreements
 *   tsx compare.ts <reference.json> <agent.json> <disagreements.json> <rerun-reference.json> <rerun-agent.json>
 *
 * With the rerun files, a case that disagreed first and agrees on the rerun is reported as flaky; one that
 * disagrees again fails the comparison. Exit code 1 when any case disagrees (after the rerun, if given).
 */
import { readFileSync, writeFileSync } from "node:fs";

interface Outcome {
  name: string;
  rule?: string;
  ok: boolean;
  error?: string;
}

interface Results {
  target: string;
  done: boolean;
  outcomes: Outcome[];
  /** Cases left out on purpose (tools/windows/excluded.ts), with the rule and the reason. */
  excluded?: { name: string; rule: string; reason: string }[];
}

function load(path: string): Results {
  return JSON.parse(readFileSync(path, "utf8")) as Results;
}

/**
 * Names of the cases that do not pass on both targets, in the reference's order: the two disagree, or both fail
 * (every case that is not excluded must pass on both, so a failure both share is no agreement to accept).
 */
function disagreements(reference: Results, agent: Results): string[] {
  const agentByName = new Map(agent.outcomes.map((outcome) => [outcome.name, outcome]));
  const names = [...reference.outcomes.map((outcome) => outcome.name)];
  for (const outcome of agent.outcomes) if (!names.includes(outcome.name)) names.push(outcome.name);
  const referenceByName = new Map(reference.outcomes.map((outcome) => [outcome.name, outcome]));
  return names.filter((name) => !(referenceByName.get(name)?.ok && agentByName.get(name)?.ok));
}

function describe(outcome: Outcome | undefined): string {
  if (!outcome) return "did not run";
  return outcome.ok ? "pass" : `fail: ${(outcome.error ?? "").split("\n")[0]?.slice(0, 300)}`;
}

function report(title: string, names: string[], reference: Results, agent: Results): void {
  if (names.length === 0) return;
  console.log(`\n${title} (${names.length}):`);
  for (const name of names) {
    const referenceOutcome = reference.outcomes.find((outcome) => outcome.name === name);
    const agentOutcome = agent.outcomes.find((outcome) => outcome.name === name);
    console.log(`- ${name} [${referenceOutcome?.rule ?? agentOutcome?.rule ?? ""}]`);
    console.log(`    reference: ${describe(referenceOutcome)}`);
    console.log(`    agent:     ${describe(agentOutcome)}`);
  }
}

function summary(results: Results): string {
  const passed = results.outcomes.filter((outcome) => outcome.ok).length;
  return `${results.target}: ${passed}/${results.outcomes.length} cases pass${results.done ? "" : " (run incomplete)"}`;
}

/** One line per case: reference then agent outcome (P pass, F fail, - did not run), name and rules. */
function listCases(reference: Results, agent: Results): void {
  const agentByName = new Map(agent.outcomes.map((outcome) => [outcome.name, outcome]));
  const mark = (outcome: Outcome | undefined) => (outcome === undefined ? "-" : outcome.ok ? "P" : "F");
  for (const outcome of reference.outcomes) {
    console.log(`  ${mark(outcome)}${mark(agentByName.get(outcome.name))} ${outcome.name} [${outcome.rule ?? ""}]`);
  }
}

/** The cases both targets left out, each with its rule and reason. */
function listExcluded(results: Results): void {
  const excluded = results.excluded ?? [];
  if (excluded.length === 0) return;
  console.log(`excluded ${excluded.length} cases (tools/windows/excluded.ts):`);
  for (const exclusion of excluded) console.log(`  -- ${exclusion.name} [${exclusion.rule}]: ${exclusion.reason}`);
}

/** Why a set of results proves nothing (a run that crashed or ran no case), if it does. */
function unusable(results: Results): string | undefined {
  if (!results.done) return `${results.target}: the run did not complete`;
  if (results.outcomes.length === 0) return `${results.target}: the run compared no case`;
  return undefined;
}

function main(): number {
  const [referencePath, agentPath, outPath, rerunReferencePath, rerunAgentPath] = process.argv.slice(2);
  if (!referencePath || !agentPath || !outPath) throw new Error("usage: compare <ref.json> <agent.json> <out.json>");
  const reference = load(referencePath);
  const agent = load(agentPath);
  const broken = [reference, agent].map(unusable).filter((why) => why !== undefined);
  if (broken.length > 0) {
    for (const why of broken) console.log(`make test-windows: ${why}`);
    return 2;
  }
  const first = disagreements(reference, agent);
  if (!rerunReferencePath || !rerunAgentPath) {
    console.log(summary(reference));
    console.log(summary(agent));
    console.log(`compared ${new Set([...reference.outcomes, ...agent.outcomes].map((o) => o.name)).size} cases:`);
    listCases(reference, agent);
    listExcluded(reference);
    writeFileSync(outPath, JSON.stringify(first));
    report("failures or disagreements of the first run (rerunning them once)", first, reference, agent);
    return first.length > 0 ? 1 : 0;
  }
  const rerunReference = load(rerunReferencePath);
  const rerunAgent = load(rerunAgentPath);
  const brokenRerun = [rerunReference, rerunAgent].map(unusable).filter((why) => why !== undefined);
  if (brokenRerun.length > 0) {
    for (const why of brokenRerun) console.log(`make test-windows (rerun): ${why}`);
    return 2;
  }
  const again = new Set(disagreements(rerunReference, rerunAgent));
  const persistent = first.filter((name) => again.has(name));
  const flaky = first.filter((name) => !again.has(name));
  writeFileSync(outPath, JSON.stringify({ persistent, flaky }));
  report("FLAKY: failed or disagreed once, passed on both on the rerun", flaky, reference, agent);
  report("FAILURES OR DISAGREEMENTS (on both runs)", persistent, rerunReference, rerunAgent);
  return persistent.length > 0 ? 1 : 0;
}

process.exitCode = main();
