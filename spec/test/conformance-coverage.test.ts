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
  E9: "a negative rule about the whole implementation (never `not_supported`)",
  WA1: "watching is not in the reference yet",
  ND8: "Windows (SystemRoot)",
  ND9: "`which bash` is only consulted when /bin/bash is missing",
  ND11: "a read error on a command pipe cannot be provoked from outside",
  ND12: "needs a spill failure (X28)",
  SSH1: "only an agent started over SSH has SSH session variables to drop (sdk/test/ssh.e2e.test.ts)",
};

function ruleIds(): string[] {
  const text = readFileSync(new URL("../semantics.md", import.meta.url), "utf8");
  return [...new Set([...text.matchAll(/^(?:- )?\*\*([A-Z]+[0-9]+)\b/gm)].map((match) => match[1]))];
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

  it("exempts only rules that exist and have no case", () => {
    expect(Object.keys(exempt).filter((id) => !ids.includes(id) || cited.has(id))).toEqual([]);
  });
});
