/**
 * The link check of the project's Markdown (tools/test/docs-links.test.ts): every relative link of a document must
 * name a file or directory that exists, and every `#anchor` (in the same document or in another `.md` file) must be
 * the anchor of one of that document's headings, spelled the way GitHub spells them. Links to other schemes
 * (https:, mailto:) are not followed; text inside code fences and code spans is not Markdown and is skipped.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** One link that leads nowhere: the document, its line, the target as written, and why. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** The document's lines that are Markdown, with code fences blanked (line numbers kept). */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return "";
    }
    if (marker !== undefined) {
      fence = marker;
      return "";
    }
    return line;
  });
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, each space a hyphen. */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a document's headings; a repeated one gets -1, -2, ... as on GitHub. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = headingAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The links of a document: inline links and images, and reference definitions, with their line numbers. */
export function linksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  proseLines(text).forEach((raw, index) => {
    // A code span is text, not Markdown; it may sit inside a link's text, so it is replaced rather than dropped.
    const line = raw.replace(/(`+)(?:(?!\1).)+?\1/g, "code");
    for (const match of line.matchAll(/\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: index + 1, target: match[1] });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) links.push({ line: index + 1, target: definition[1] });
  });
  return links;
}

/** Every broken link of `files` (absolute paths); `root` only shortens the names in the report. */
export function brokenLinks(files: readonly string[], root: string): BrokenLink[] {
  const texts = new Map<string, string>();
  const read = (path: string): string => {
    let text = texts.get(path);
    if (text === undefined) {
      text = readFileSync(path, "utf8");
      texts.set(path, text);
    }
    return text;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    for (const { line, target } of linksOf(read(file))) {
      const report = (reason: string) => broken.push({ file: relative(root, file), line, target, reason });
      if (target === "") {
        report("empty link");
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const destination = pathPart === "" ? file : resolve(dirname(file), pathPart);
      if (!existsSync(destination)) {
        report(`no such file: ${relative(root, destination)}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!destination.endsWith(".md")) {
        report("an anchor into a file that is not Markdown");
        continue;
      }
      if (!anchorsOf(read(destination)).has(anchor)) report(`no heading with anchor #${anchor}`);
    }
  }
  return broken;
}
