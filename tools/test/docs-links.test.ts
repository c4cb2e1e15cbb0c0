// Every relative link and anchor of the project's Markdown (README, docs/, spec/, ...) leads somewhere
// (tools/docs-links.ts).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { anchorsOf, brokenLinks, headingAnchor, linksOf } from "../docs-links.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));

/** Directories that hold no project documents: installed packages, build output, caches. */
const skipped = new Set(["node_modules", "dist", "bin"]);

/** The documents checked: every .md file of the project (README.md, docs/, spec/, the packages' READMEs, ...). */
function documents(dir = repo): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith(".") || skipped.has(entry.name) ? [] : documents(path);
    return entry.isFile() && entry.name.endsWith(".md") ? [path] : [];
  });
}

describe("the project's Markdown links", () => {
  it("lead to files that exist and to headings that exist", () => {
    const files = documents();
    for (const required of ["README.md", "docs/architecture.md", "spec/semantics.md", "spec/protocol.md"]) {
      expect(files).toContain(join(repo, required));
    }
    expect(brokenLinks(files, repo)).toEqual([]);
  });
});

describe("the link check", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("spells anchors as GitHub does", () => {
    expect(headingAnchor("14. Output window (XW) — **not part of `NodeExecutionEnv`**")).toBe(
      "14-output-window-xw--not-part-of-nodeexecutionenv",
    );
    expect(headingAnchor("The agent's command line")).toBe("the-agents-command-line");
    expect(headingAnchor("Running pi's tools: [pi](x.md) and read_file")).toBe("running-pis-tools-pi-and-read_file");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n### A ##\n")]).toEqual(["a", "a-1", "a-2"]);
  });

  it("finds inline links, links around code spans and reference definitions, not code", () => {
    const text = '[`x.md`](x.md) and ![i](img.png "t")\n`[no](code.md)`\n```\n[no](fence.md)\n```\n[r]: ref.md\n';
    expect(linksOf(text)).toEqual([
      { line: 1, target: "x.md" },
      { line: 1, target: "img.png" },
      { line: 6, target: "ref.md" },
    ]);
  });

  it("reports a missing file, a missing anchor, an anchor into a non-Markdown file and an empty link", () => {
    dir = mkdtempSync(join(tmpdir(), "outpost-links-"));
    writeFileSync(join(dir, "other.md"), "# Other\n## Part two\n");
    writeFileSync(join(dir, "code.ts"), "");
    writeFileSync(
      join(dir, "doc.md"),
      [
        "# Doc",
        "[ok](other.md#part-two) [ok](#doc) [ok](https://example.com/x#y) [ok](code.ts) [ok](.)",
        "[gone](missing.md)",
        "[gone](other.md#part-three)",
        "[gone](#nowhere)",
        "[bad](code.ts#L1)",
        "[empty]()",
      ].join("\n"),
    );
    const found = brokenLinks([join(dir, "doc.md")], dir).map(({ line, target, reason }) => [line, target, reason]);
    expect(found).toEqual([
      [3, "missing.md", "no such file: missing.md"],
      [4, "other.md#part-three", "no heading with anchor #part-three"],
      [5, "#nowhere", "no heading with anchor #nowhere"],
      [6, "code.ts#L1", "an anchor into a file that is not Markdown"],
      [7, "", "empty link"],
    ]);
  });
});
