/**
 * Argument pools of the differential sequences: few enough names that random operations collide on the same
 * paths, chosen so that every hard case of the contract is a few draws away (a path under a file, a trailing
 * slash, non-ASCII and non-UTF-8 names, symbolic links, contents that cross chunk sizes and split characters).
 */
import type { ShellSpillOptions } from "@outpost/sdk";

/**
 * Marks a pool path that is absolute: `@/x` means `<root>/x` of the env the sequence runs in, and `file://@/x`
 * the file URL of that path.
 */
export const ROOT_MARK = "@/";

/** Paths most operations draw from (weighted heavily, so operations meet each other's results). */
export const CORE_PATHS = ["a.txt", "b", "dir", "dir/c.txt", "dir/sub", "dir/sub/d.bin", "missing", "a.txt/x"] as const;

/**
 * Rarer paths: non-ASCII, trailing slash, a symbolic link (made by exec), the cwd itself, an absolute path, file
 * URLs (one percent-encoded), `..` applied to the text.
 */
export const EXTRA_PATHS = [
  "é.txt",
  "dir/",
  "link",
  "link/x",
  "",
  "@/dir/c.txt",
  "dir/../b",
  "dir//c.txt",
  "./a.txt",
  "file://@/a.txt",
  "file://@/%C3%A9.txt",
] as const;

/** Paths the prelude of a sequence writes files at (`dir/sub/d.bin` creates both directories). */
export const FILE_PATHS = ["a.txt", "b", "dir/c.txt", "dir/sub/d.bin", "é.txt"] as const;

/** One file content: a string (written as UTF-8) or bytes, with a short label for printing. */
export interface Content {
  label: string;
  value: string | Uint8Array;
}

const BOM = "\uFEFF";

/** Contents by key. The big ones are built once: they are shared by every run. */
export const CONTENTS: Readonly<Record<string, Content>> = {
  empty: { label: '""', value: "" },
  hello: { label: '"hello\\n"', value: "hello\n" },
  helloBytes: { label: 'bytes("hello\\n")', value: new TextEncoder().encode("hello\n") },
  bom: { label: 'BOM+"bom\\r\\nline"', value: `${BOM}bom\r\nline` },
  invalid: { label: "bytes(E2 82 0A FF EF BB BF)", value: Uint8Array.of(0xe2, 0x82, 0x0a, 0xff, 0xef, 0xbb, 0xbf) },
  lone: { label: '"lone\\uD800\\n"', value: "lone\uD800\n" },
  lines: { label: '"one\\r\\n\\ntwo\\npartial"', value: "one\r\n\ntwo\npartial" },
  x70k: { label: '"x"×70000', value: "x".repeat(70_000) },
  e300k: { label: '"é"×300001', value: "é".repeat(300_001) },
};

/** Keys of the small contents (drawn often) and of the big ones (drawn rarely: they cost milliseconds each). */
export const SMALL_CONTENT_KEYS = ["empty", "hello", "helloBytes", "bom", "invalid", "lone", "lines"] as const;
export const BIG_CONTENT_KEYS = ["x70k", "e300k"] as const;

/** Prefixes of `createTempDir`: the default, a plain one, the empty one (a sibling of tmpdir), a missing subdir. */
export const TEMP_DIR_PREFIXES = [undefined, "pfx-", "", "sub/", "é-"] as const;

/** Options of `createTempFile`. */
export const TEMP_FILE_OPTIONS = [
  undefined,
  {},
  { prefix: "p-", suffix: ".log" },
  { suffix: "" },
  { prefix: "sub/" },
] as const;

/** Parts given to `joinPath` (pure string work, compared as is). */
export const JOIN_PARTS: readonly (readonly string[])[] = [
  [],
  [""],
  ["a", "b"],
  ["a/", "b/"],
  ["/a", "../../b"],
  ["dir", "..", "..", "x"],
  ["é", "./", "c.txt"],
  ["a//b", "", "c"],
];

/** One command of the exec pool. */
export interface CommandSpec {
  label: string;
  command: string | readonly string[];
  env?: Record<string, string>;
  inheritEnv?: boolean;
  timeout?: number;
  /**
   * Writes one stream, then the other, then the first again, without pauses: whether the last write is read
   * together with the first (one read takes all a stream holds) or after the other stream is then a race (in
   * Node too, X20), so the spill is compared as a multiset of bytes. Each stream's text is still compared. So does
   * a command that may write stderr before stdout (`cat` of a missing file, then of one that exists): output both
   * streams hold when reading starts is read stdout first. A command that writes stdout and then stderr only does
   * not race (readiness order is write order) — unless its output is still arriving when the spill file is created
   * (X26: Node's pause and resume around the creation).
   */
  racesStreams?: true;
}

/**
 * Commands run by `exec`. They write both streams, fail, print invalid UTF-8 and BOMs, split a character across
 * two writes, cross spill thresholds, and change the tree (non-UTF-8 names, symbolic links) so that later file
 * operations see what only a shell can make.
 */
export const COMMANDS: readonly CommandSpec[] = [
  { label: "both streams", command: "printf out; printf err >&2; printf more", racesStreams: true },
  { label: "both streams, paced", command: "printf out; sleep 0.03; printf err >&2; sleep 0.03; printf more" },
  {
    label: "invalid utf-8",
    command: "printf '\\xe2\\x82\\n\\xff'; printf '\\xef\\xbb\\xbfx\\xe2' >&2",
  },
  { label: "exit 3", command: "printf 'bye\\n' >&2; exit 3" },
  { label: "cat a.txt", command: "cat a.txt" },
  { label: "ls", command: "ls -A" },
  { label: "seq 3000", command: "seq 1 3000" },
  { label: "make tree", command: "mkdir -p dir/sub && printf c > dir/c.txt && printf '\\x00\\x01' > dir/sub/d.bin" },
  { label: "non-utf8 names", command: "touch \"$(printf 'bad\\377')\" \"$(printf 'a\\376 z')\"" },
  { label: "non-utf8 in dir", command: "mkdir -p dir && touch \"dir/$(printf '\\377')\" dir/z" },
  { label: "link a.txt", command: "ln -s a.txt link" },
  { label: "link dir", command: "ln -s dir link" },
  { label: "dangling link", command: "ln -s missing link" },
  { label: "link loop", command: "ln -s link link" },
  { label: "hard link", command: "ln a.txt b" },
  { label: "many files", command: "mkdir -p dir && for i in $(seq 1 300); do : > dir/f$i; done" },
  { label: "kill -9", command: "printf x; kill -9 $$" },
  // Output still arriving when the spill starts: Node's resume after the file is created may let stderr's held bytes
  // into the file first (X26, measured 4 of 150 runs on the reference).
  { label: "70000 y", command: "head -c 70000 /dev/zero | tr '\\0' y; printf '\\xe2\\x82' >&2", racesStreams: true },
  { label: "split char", command: "printf 'partial\\xe2\\x82'; sleep 0.02; printf '\\xac end\\n'" },
  { label: "pwd", command: "pwd" },
  { label: "env var", command: 'printf "%s" "$OUTPOST_PROP_VAR"', env: { OUTPOST_PROP_VAR: "v\u00e9\n" } },
  { label: "no inherit", command: 'printf "[%s]|%s" "$HOME" "$ONLY"', env: { ONLY: "1" }, inheritEnv: false },
  { label: "timeout", command: "printf early; sleep 2", timeout: 0.2 },
  {
    label: "argv sh",
    command: ["sh", "-c", 'printf "%s|%s" "$0" "$1"; printf e >&2; exit 4', "argv0", "h é;$(touch pwned)"],
  },
  { label: "argv printf", command: ["printf", "\\xff\\xfe\\n"] },
  { label: "argv ls", command: ["ls", "-A"] },
  { label: "argv cat", command: ["cat", "a.txt", "missing"], racesStreams: true },
  { label: "argv missing program", command: ["outpost-prop-missing-program"] },
  { label: "argv empty", command: [] },
  { label: "argv ./a.txt", command: ["./a.txt"] },
  { label: "argv env", command: ["env"], env: { A: "1", B: "" }, inheritEnv: false },
];

/** `cwd` options of exec: the env's cwd, a subdirectory, a missing one, a file, an absolute path. */
export const EXEC_CWDS = [undefined, "dir", "missing", "a.txt", "@/dir", ""] as const;

/** Values assigned to `env.cwd` mid-sequence (absolute only: a relative cwd would resolve against this process's). */
export const ENV_CWDS = ["@/", "@/dir", "@/dir/", "@/missing", "@/a.txt"] as const;

/** Spill thresholds: none (mostly), zero (spill at once), tiny, and some only lines or only bytes cross. */
export const SPILLS: readonly (ShellSpillOptions | undefined)[] = [
  undefined,
  { afterBytes: 0, afterLines: 0 },
  { afterBytes: 5, afterLines: 100 },
  { afterBytes: 100_000, afterLines: 2 },
  { afterBytes: 100, afterLines: 10 },
];

/**
 * Modes the permissions property gives entries of its tree (`undefined` keeps the default): nothing, search only,
 * read only, read and search, write only, write and search — what makes open, readdir, mkdir, rename and rm fail
 * `EACCES` for a user that is not root.
 */
export const PERMISSION_MODES = [undefined, 0o000, 0o100, 0o400, 0o500, 0o200, 0o300] as const;

/** The entries of the permissions property's tree whose mode it draws from `PERMISSION_MODES`. */
export const PERMISSION_PATHS = ["a.txt", "dir", "dir/c.txt", "dir/sub"] as const;
