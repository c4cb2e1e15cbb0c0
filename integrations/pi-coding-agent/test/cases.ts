/**
 * The differential cases: each of pi's seven tools with several argument sets on the scenario (scenario.ts), in
 * the order they run (write and edit change files that later cases see, on both sides alike). A case with
 * `accepted` is a known difference; its cause is listed in the package README.
 */
import type { Outcome, ToolCase } from "./harness.js";

/** pi's local ls lists a FIFO; the env's directory reader leaves out kinds Durable cannot represent. */
const FIFO_NOT_LISTED = "FIFOs are not representable in Durable's file kinds: the env's directory reader skips them";

/** Durable's exec reports a death by signal as 128 + n; pi's local exec gets no code and shows none. */
const SIGNAL_EXIT_CODE =
  "Durable's exec reports a command killed by a signal as exit code 128 + n; pi's local exec sees null";

/** pi's local outcome of a shell killed by SIGTERM, as Outpost reports it: a failure with code 143. */
function exitedBySignal(pi: Outcome): Outcome {
  const text = (pi.result!.content as { type: string; text: string }[])[0].text;
  return { files: pi.files, error: `${text}\n\nCommand exited with code 143` };
}

/** pi words a find result from `FindOperations` differently than one from its local fd run. */
const FIND_OPERATIONS_WORDING =
  "pi's find formats results from FindOperations (its branch for remote use) differently than its local fd run";

/** The limit notice of pi's `FindOperations` branch: no hint to raise the limit. */
function shortLimitNotice(pi: Outcome): Outcome {
  const content = pi.result?.content as { type: string; text: string }[];
  return {
    ...pi,
    result: {
      ...pi.result!,
      content: content.map((part) => ({
        ...part,
        text: part.text.replace(
          / results limit reached\. Use limit=\d+ for more, or refine pattern\]/,
          " results limit reached]",
        ),
      })),
    },
  };
}

/** pi's `FindOperations` branch checks the path itself; its local run passes it to fd, which fails. */
function pathNotFound(path: string): (pi: Outcome) => Outcome {
  return (pi) => ({ files: pi.files, error: `Path not found: <root>/${path}` });
}

function withoutRow(row: string): (pi: Outcome) => Outcome {
  return (pi) => {
    const content = pi.result?.content as { type: string; text: string }[];
    return {
      ...pi,
      result: {
        ...pi.result!,
        content: content.map((part) => ({
          ...part,
          text: part.text
            .split("\n")
            .filter((line) => line !== row)
            .join("\n"),
        })),
      },
    };
  };
}

export const CASES: ToolCase[] = [
  // read
  { tool: "read", label: "read a file without a final newline", args: { path: "nofinal.txt" } },
  { tool: "read", label: "read the 3,000-line file (truncated at 2,000 lines)", args: { path: "big.txt" } },
  { tool: "read", label: "read with offset near the end", args: { path: "big.txt", offset: 2990 } },
  { tool: "read", label: "read with offset and limit", args: { path: "big.txt", offset: 100, limit: 5 } },
  { tool: "read", label: "read a BOM file", args: { path: "bom.txt" } },
  { tool: "read", label: "read a binary file", args: { path: "binary.bin" } },
  { tool: "read", label: "read an image", args: { path: "image.png" } },
  { tool: "read", label: "read a missing file", args: { path: "missing.txt" } },
  { tool: "read", label: "read a directory", args: { path: "src" } },
  { tool: "read", label: "read past the end", args: { path: "nofinal.txt", offset: 10 } },
  { tool: "read", label: "read through a link", args: { path: "link-to-src/main.ts", limit: 1 } },
  { tool: "read", label: "read an absolute path", args: { path: "<root>/src/util/helper.ts" } },
  // write
  {
    tool: "write",
    label: "write into new directories",
    args: { path: "new/dir/file.txt", content: "hello\n" },
    files: ["new/dir/file.txt"],
  },
  {
    tool: "write",
    label: "overwrite a file",
    args: { path: "nofinal.txt", content: "alpha\nbeta\ngamma\ndelta" },
    files: ["nofinal.txt"],
  },
  { tool: "write", label: "write below a file", args: { path: "dup.txt/x.txt", content: "x" }, files: ["dup.txt"] },
  {
    tool: "write",
    label: "write non-ASCII text",
    args: { path: "unicode.txt", content: "é ü 😀\n" },
    files: ["unicode.txt"],
  },
  // edit
  {
    tool: "edit",
    label: "edit a unique match",
    args: { path: "edit-me.txt", edits: [{ oldText: "two", newText: "TWO" }] },
    files: ["edit-me.txt"],
  },
  {
    tool: "edit",
    label: "edit a non-unique match",
    args: { path: "dup.txt", edits: [{ oldText: "foo", newText: "baz" }] },
    files: ["dup.txt"],
  },
  {
    tool: "edit",
    label: "edit text that is not there",
    args: { path: "edit-me.txt", edits: [{ oldText: "absent", newText: "x" }] },
    files: ["edit-me.txt"],
  },
  {
    tool: "edit",
    label: "edit a BOM file (BOM kept)",
    args: { path: "bom.txt", edits: [{ oldText: "second", newText: "2nd" }] },
    files: ["bom.txt"],
  },
  {
    tool: "edit",
    label: "edit CRLF lines",
    args: { path: "src/util/deep/deeper.txt", edits: [{ oldText: "crlf line\nlast", newText: "LF\nend" }] },
    files: ["src/util/deep/deeper.txt"],
  },
  {
    tool: "edit",
    label: "edit two blocks",
    args: {
      path: "edit-me.txt",
      edits: [
        { oldText: "one", newText: "1" },
        { oldText: "three", newText: "3" },
      ],
    },
    files: ["edit-me.txt"],
  },
  {
    tool: "edit",
    label: "edit a missing file",
    args: { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] },
  },
  { tool: "edit", label: "edit a directory", args: { path: "src", edits: [{ oldText: "a", newText: "b" }] } },
  // bash
  {
    tool: "bash",
    label: "bash stdout and stderr",
    args: { command: "echo out; sleep 0.2; echo err >&2; sleep 0.2; echo out again" },
  },
  { tool: "bash", label: "bash exit code", args: { command: "echo before; exit 3" } },
  { tool: "bash", label: "bash no output", args: { command: "true" } },
  {
    tool: "bash",
    label: "bash syntax (the shell is bash)",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, for the shell
    args: { command: '[[ a == a ]] && echo "bash ${BASH_VERSINFO[0]:+yes}"' },
  },
  { tool: "bash", label: "bash output without a newline", args: { command: "printf 'no newline'" } },
  { tool: "bash", label: "bash in the cwd", args: { command: "pwd; ls src" } },
  { tool: "bash", label: "bash bytes that are not UTF-8", args: { command: "printf 'a\\377b\\n'" } },
  { tool: "bash", label: "bash timeout", args: { command: "echo started; sleep 10", timeout: 1 } },
  { tool: "bash", label: "bash timeout 0 is none", args: { command: "sleep 0.2; echo done", timeout: 0 } },
  { tool: "bash", label: "bash abort", args: { command: "echo started; sleep 10" }, abortAfterMs: 1000 },
  { tool: "bash", label: "bash long output (full-output file)", args: { command: "seq 1 5000" } },
  { tool: "bash", label: "bash long output and a failure", args: { command: "seq 1 3000; exit 2" } },
  {
    tool: "bash",
    label: "bash killed by a signal",
    args: { command: "echo before; kill -TERM $$" },
    accepted: { cause: SIGNAL_EXIT_CODE, expect: exitedBySignal },
  },
  { tool: "bash", label: "bash writes a file", args: { command: "echo made > made.txt" }, files: ["made.txt"] },
  // ls
  { tool: "ls", label: "ls the root", args: {}, accepted: { cause: FIFO_NOT_LISTED, expect: withoutRow("fifo") } },
  { tool: "ls", label: "ls a directory", args: { path: "src" } },
  { tool: "ls", label: "ls with a limit", args: { path: "src", limit: 1 } },
  { tool: "ls", label: "ls through a link", args: { path: "link-to-src/util" } },
  { tool: "ls", label: "ls a missing path", args: { path: "missing" } },
  { tool: "ls", label: "ls a file", args: { path: "big.txt" } },
  { tool: "ls", label: "ls a FIFO", args: { path: "fifo" } },
  // find
  { tool: "find", label: "find *.txt", args: { pattern: "*.txt" }, unordered: true },
  { tool: "find", label: "find in a directory", args: { pattern: "*.ts", path: "src" }, unordered: true },
  { tool: "find", label: "find a path glob", args: { pattern: "src/**/*.txt" }, unordered: true },
  {
    tool: "find",
    label: "find with a limit",
    args: { pattern: "*.ts", path: "src", limit: 2 },
    unordered: true,
    accepted: { cause: FIND_OPERATIONS_WORDING, expect: shortLimitNotice },
  },
  { tool: "find", label: "find nothing", args: { pattern: "*.nothing" } },
  { tool: "find", label: "find hidden files", args: { pattern: "secret*" } },
  {
    tool: "find",
    label: "find in a missing path",
    args: { pattern: "*", path: "missing" },
    accepted: { cause: FIND_OPERATIONS_WORDING, expect: pathNotFound("missing") },
  },
  // grep
  { tool: "grep", label: "grep the tree", args: { pattern: "needle", limit: 1000 }, unordered: true },
  { tool: "grep", label: "grep one file with a limit", args: { pattern: "needle", path: "big.txt", limit: 5 } },
  {
    tool: "grep",
    label: "grep ignoring case",
    args: { pattern: "NEEDLE", path: "src", ignoreCase: true },
    unordered: true,
  },
  { tool: "grep", label: "grep a literal", args: { pattern: "a.b", literal: true }, unordered: true },
  { tool: "grep", label: "grep a regex", args: { pattern: "^line 29[0-9]{2} has", path: "big.txt", limit: 3 } },
  { tool: "grep", label: "grep with context", args: { pattern: "beta", path: "nofinal.txt", context: 1 } },
  {
    tool: "grep",
    label: "grep with context in a big file",
    args: { pattern: "line 1400 ", path: "big.txt", context: 2 },
  },
  { tool: "grep", label: "grep with a glob", args: { pattern: "needle", glob: "*.ts" }, unordered: true },
  { tool: "grep", label: "grep a BOM file", args: { pattern: "hello", path: "bom.txt" } },
  { tool: "grep", label: "grep CRLF lines", args: { pattern: "end", path: "src/util/deep" } },
  { tool: "grep", label: "grep a long line", args: { pattern: "needle", path: "long-line.txt" } },
  { tool: "grep", label: "grep with no match", args: { pattern: "zzz-no-such-text" } },
  {
    tool: "grep",
    label: "grep a FIFO (ripgrep waits for a writer until aborted)",
    args: { pattern: "x", path: "fifo" },
    abortAfterMs: 1000,
  },
  { tool: "grep", label: "grep a missing path", args: { pattern: "x", path: "missing" } },
];

/** What the search through the env answers for a FIFO named on its own: no lines, at once. */
const ENV_SEARCH_FIFO =
  "grep searching through the env does not open a file that is not regular (a FIFO); ripgrep waits for a writer";

/**
 * The grep cases for grep's search through the env (no ripgrep on the target): the same, except that a FIFO named
 * on its own gives no matches at once where ripgrep waits until the call is aborted.
 */
export const ENV_GREP_CASES: ToolCase[] = CASES.filter((toolCase) => toolCase.tool === "grep").map((toolCase) =>
  toolCase.args.path === "fifo"
    ? {
        ...toolCase,
        accepted: {
          cause: ENV_SEARCH_FIFO,
          expect: (pi) => ({
            files: pi.files,
            result: { content: [{ type: "text", text: "No matches found" }], details: undefined },
          }),
        },
      }
    : toolCase,
);
