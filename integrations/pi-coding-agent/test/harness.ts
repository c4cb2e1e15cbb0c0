/**
 * Running one tool call on a set of pi tool definitions and turning what it did into a comparable outcome: the
 * content and details returned to the model (or the error message), the files the case names, and the contents of
 * bash's full-output file. Root directories and temp-file names are the only things normalized.
 */
import type { OutpostToolDefinition } from "../src/index.js";

/** What a call did, as the model and the disk see it. */
export interface Outcome {
  result?: { content: unknown; details: unknown };
  error?: string;
  /** Contents of the files the case names, after the call (`null`: missing). */
  files: Record<string, string | null>;
  /** Contents of bash's full-output file, read where the tool says it is. */
  fullOutput?: string | null;
}

/** One call of a tool with its arguments. */
export interface ToolCase {
  tool: "read" | "write" | "edit" | "bash" | "ls" | "find" | "grep";
  label: string;
  args: Record<string, unknown>;
  /** Abort the call this many milliseconds after it starts. */
  abortAfterMs?: number;
  /** Files (relative to the root) whose contents are compared after the call. */
  files?: string[];
  /** The rows come in ripgrep's or fd's thread order: compare them sorted. */
  unordered?: boolean;
  /** An accepted difference: its cause (listed in the README) and how pi's local outcome becomes Outpost's. */
  accepted?: { cause: string; expect: (pi: Outcome) => Outcome };
}

/** How a side reads its files and full-output files after a call. */
export interface Side {
  root: string;
  definitions: OutpostToolDefinition[];
  readFile(path: string): Promise<string | null>;
  /** Paths that name this side's temp files (bash's full output), to be replaced by `<full-output>`. */
  fullOutputPattern: RegExp;
}

function replaceAll(text: string, roots: readonly string[], side: Side): string {
  let out = text;
  for (const root of roots) out = out.split(root).join("<root>");
  return out.replace(side.fullOutputPattern, "<full-output>");
}

/** Sorts the rows of a listing before its notices (`\n\n[…]`). */
function sortRows(text: string): string {
  const notice = text.indexOf("\n\n[");
  const rows = notice === -1 ? text : text.slice(0, notice);
  const rest = notice === -1 ? "" : text.slice(notice);
  return rows.split("\n").sort().join("\n") + rest;
}

function normalizeValue(value: unknown, roots: readonly string[], side: Side, unordered: boolean, key = ""): unknown {
  if (typeof value === "string") {
    const replaced = replaceAll(value, roots, side);
    return unordered && key === "text" ? sortRows(replaced) : replaced;
  }
  if (Array.isArray(value)) return value.map((item) => normalizeValue(item, roots, side, unordered));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, normalizeValue(item, roots, side, unordered, name)]),
    );
  }
  return value;
}

/** Runs a case on one side and returns its normalized outcome. */
export async function runCase(side: Side, toolCase: ToolCase, roots: readonly string[]): Promise<Outcome> {
  const definition = side.definitions.find((candidate) => candidate.name === toolCase.tool);
  if (definition === undefined) throw new Error(`no ${toolCase.tool} tool`);
  const controller = new AbortController();
  const timer =
    toolCase.abortAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), toolCase.abortAfterMs);
  const outcome: Outcome = { files: {} };
  let fullOutputPath: string | undefined;
  try {
    const args = JSON.parse(JSON.stringify(toolCase.args).split("<root>").join(side.root));
    const result = await definition.execute(
      `call-${toolCase.label}`,
      args,
      controller.signal,
      undefined,
      undefined as never,
    );
    fullOutputPath = (result.details as { fullOutputPath?: string } | undefined)?.fullOutputPath;
    outcome.result = normalizeValue(
      { content: result.content, details: result.details },
      roots,
      side,
      toolCase.unordered === true,
    ) as Outcome["result"];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    fullOutputPath = message.match(side.fullOutputPattern)?.[0];
    outcome.error = normalizeValue(message, roots, side, false) as string;
  } finally {
    clearTimeout(timer);
  }
  if (fullOutputPath !== undefined) outcome.fullOutput = await side.readFile(fullOutputPath);
  for (const path of toolCase.files ?? []) outcome.files[path] = await side.readFile(`${side.root}/${path}`);
  return outcome;
}
