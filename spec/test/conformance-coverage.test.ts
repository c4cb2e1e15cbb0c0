/**
 * Every rule of `spec/semantics.md` is checked by at least one conformance case, except the rules listed below
 * with the reason no runner-independent case can check them on this platform.
 */
import { readFileSync } from "node:fs";
import { createConformanceCases } from "@outpost/spec/conformance";
import { describe, expect, it } from "vitest";

/** Rules without a case, and why. */
const exempt: Record<string, string> = {
  P11: "Windows path flavour",
  P12: "Windows path flavour",
  X7: "Windows shell lookup",
  X8: "the legacy WSL launcher needs a shell path spelled as a Windows path relative to the host's cwd",
  X28: "a spill failure needs an env whose temp-file creation fails, which no env option can arrange",
  WA10: "running out of native watches needs the target's cooperation: the reference is checked in a user namespace with few inotify watches (spec/test/reference-watch.test.ts)",
  WA14: "losing the agent needs killing it under a live watcher: sdk/test/watch.test.ts (reopen, overflow, a reopen failing for good)",
  ND8: "Windows (SystemRoot)",
  ND9: "`which bash` is only consulted when /bin/bash is missing",
  ND11: "a read error on a command pipe cannot be provoked from outside",
  ND12: "needs a spill failure (X28)",
  LF17: "needs an agent without the listFiles feature; sdk/test/list-files.test.ts drives a protocol 1 agent without it",
  SF15: "needs an agent without the searchFiles feature; sdk/test/search-files.test.ts drives a protocol 1 agent without it",
  AL1: "agent lifecycle: needs the agent to stop under load (agent-go/cmd/outpost/agent_linux_test.go)",
  AL2: "agent lifecycle: needs the agent killed (agent-go/cmd/outpost/agent_linux_test.go)",
  AL3: "agent lifecycle: an env-independent case cannot see adopted processes (agent-go/cmd/outpost/agent_linux_test.go)",
  AL4: "agent lifecycle: needs the agent's memory (agent-go/cmd/outpost/agent_linux_test.go)",
  AL5: "network faults need the WAN rig's cut link and killed sshd (tools/wan/test/faults.test.ts, make test-wan)",
  AL6: "a watcher across a cut path needs the WAN rig (tools/wan/test/watch-cut.test.ts); over a pipe with the agent stopped: sdk/test/watch.test.ts",
  AL7: "operations across a cut path need the WAN rig (tools/wan/test/cut-sequences.test.ts); over a pipe with the agent stopped or killed: properties/lost-agent.test.ts",
  SSH1: "only an agent started over SSH has SSH session variables to drop (sdk/test/ssh.e2e.test.ts)",
  SSH2: "deployment over SSH, not an env method (sdk/test/ssh.e2e.test.ts)",
  SSH3: "ssh config reading, not an env method (sdk/test/ssh-config.test.ts, against ssh -G)",
  SSH4: "host keys and keepalives of SSH hops, not an env method (sdk/test/ssh.e2e.test.ts)",
  SSH5: "deployment to Windows over SSH, not an env method (tools/windows/ssh-windows.e2e.test.ts, under Wine)",
  SSH6: "the SSH bootstrap under bash, zsh, fish and tcsh with noisy startup files, sshd and Dropbear, not an env method (sdk/test/ssh-shells.e2e.test.ts)",
  SSH7: "remote commands and connections per connect, counted at sshd, not an env method (sdk/test/ssh-connect-budget.e2e.test.ts)",
  CT1: "deployment into a container, not an env method (sdk/test/container.e2e.test.ts)",
  CT2: "stopping or removing a container under a live agent (sdk/test/container.e2e.test.ts)",
  CT3: "closing the engine's client of an agent in a container, not an env method (sdk/test/container.e2e.test.ts)",
};

function ruleIds(): string[] {
  const text = readFileSync(new URL("../semantics.md", import.meta.url), "utf8");
  return [...new Set([...text.matchAll(/^(?:- )?\*\*([A-Z]+[0-9]+)\b/gm)].map((match) => match[1]))];
}

/** The rows of semantics.md's "Literal anchors" table: a rule id and the name of the case that anchors it. */
function anchorRows(): { rule: string; name: string }[] {
  const text = readFileSync(new URL("../semantics.md", import.meta.url), "utf8");
  const section = text.slice(text.indexOf("## 21. Literal anchors"));
  return [...section.matchAll(/^\| `([A-Z]+[0-9]+)` \|[^|\n]*\| ([^|\n]+?) \|$/gm)].map((match) => ({
    rule: match[1],
    name: match[2],
  }));
}

describe("conformance coverage", () => {
  const cases = createConformanceCases({ withEnv: async () => {} });
  const cited = new Set(cases.flatMap((testCase) => (testCase.rule ?? "").split(" ").filter(Boolean)));
  const ids = ruleIds();

  it("cites only rules that exist", () => {
    expect([...cited].filter((id) => !ids.includes(id))).toEqual([]);
  });

  it("has a case for every rule that is not exempt", () => {
    const missing = ids.filter((id) => !cited.has(id) && !id.startsWith("WIN") && exempt[id] === undefined);
    expect(missing).toEqual([]);
  });

  it("anchors every rule of the literal-anchor table with a case of that name citing it", () => {
    const rows = anchorRows();
    expect(rows.length).toBeGreaterThan(0);
    const broken = rows.filter(({ rule, name }) => {
      const found = cases.find((testCase) => testCase.name === name);
      return found === undefined || !(found.rule ?? "").split(" ").includes(rule);
    });
    expect(broken).toEqual([]);
  });

  it("exempts only rules that exist and have no case", () => {
    expect(Object.keys(exempt).filter((id) => !ids.includes(id) || cited.has(id))).toEqual([]);
  });
});
