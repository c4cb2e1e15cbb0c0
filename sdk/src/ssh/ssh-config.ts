/**
 * What an ssh config file says about one host, read as OpenSSH's `ssh` reads it: the first value obtained for a
 * keyword wins (`IdentityFile` and the other list keywords accumulate), `Host` and `Match` blocks apply when they
 * match, and `Include` reads more files in place. The `ssh-config` package tokenizes each file (quotes, `=`,
 * comments); the evaluation is ours because the package's has no `Include`, matches `?` as "zero or one" and knows
 * no negated `Match` criteria.
 *
 * - `Include`: several paths per line, each a glob(7) pattern (`*`, `?`, `[…]`; a leading dot only matched by a
 *   dot; matches read in lexical order); `~/` is the home; a relative path is under `~/.ssh` (as for every user
 *   configuration, also one named by `-F`). A pattern matching nothing is skipped. Inside a `Host`/`Match` block
 *   that does not apply, nothing of the included files applies; a `Host` or `Match` in an included file never
 *   changes which block the including file is in. At most 16 levels.
 * - `Match`: `all`, `host` (the `HostName` obtained so far, else the name given; case-insensitive),
 *   `originalhost` (the name given), `user` (the target user: the one given, else the `User` obtained so far, else
 *   the local user), `localuser`, `final` and `canonical` (both true only during the second pass that a `Match
 *   final` asks for), each negatable with `!`; pattern lists with `*`, `?` and `!`.
 * - `Match exec` runs a command in OpenSSH; Outpost never does. A `Match` whose other criteria all hold, so that the
 *   outcome depends on the command, fails with a `config` error; one whose other criteria fail is skipped.
 */
import type { Stats } from "node:fs";
import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import SSHConfig, { type Line, LineType } from "ssh-config";
import { SshError } from "./errors.js";
import { matchPattern } from "./known-hosts.js";

/** A host's values by lower-case keyword: one line's tokens (a string when it had one); list keywords accumulate. */
export type HostConfig = Record<string, string | string[]>;

/** Who is asking: the name given and, when given, the target user. */
export interface HostQuery {
  /** The host as given (an alias or a name). */
  host: string;
  /** The user given with the target or the options; it is the first `User` obtained, as on `ssh`'s command line. */
  user?: string;
  /** The local user's name, for `Match localuser` and as the default target user. */
  localUser: string;
}

/** Keywords whose every line adds to the value instead of only the first one counting. */
const LIST_KEYWORDS = new Set([
  "identityfile",
  "certificatefile",
  "localforward",
  "remoteforward",
  "dynamicforward",
  "sendenv",
  "setenv",
]);
const MAX_INCLUDE_DEPTH = 16;

/** A parsed config file and where it is (for messages). */
export interface ConfigFile {
  path: string;
  lines: SSHConfig;
}

function configError(file: string, message: string, cause?: unknown): SshError {
  return new SshError("config", `${file}: ${message}`, cause);
}

/**
 * Parses ssh config text; a syntax error, or a keyword without a value (which OpenSSH refuses), is a `config`
 * {@link SshError}.
 */
export function parseConfig(path: string, text: string): ConfigFile {
  let lines: SSHConfig;
  try {
    lines = SSHConfig.parse(text);
  } catch (error) {
    throw configError(path, `cannot parse ssh config: ${(error as Error).message}`, error);
  }
  refuseMissingValues(path, lines);
  return { path, lines };
}

/**
 * The ssh-config package reads a keyword alone on its line (also `Keyword =`) as running on into the next line,
 * which becomes its value (`Match` then `Port 1` gives the keyword "Match\n" and the value "Port 1"): a keyword or
 * separator with a line break in it is a keyword without a value.
 */
function refuseMissingValues(path: string, lines: Line[]): void {
  for (const line of lines) {
    if (line.type !== LineType.DIRECTIVE) continue;
    if (/\n/.test(line.param) || /\n/.test(line.separator)) {
      throw configError(path, `${line.param.trim()} needs a value`);
    }
    if ("config" in line) refuseMissingValues(path, line.config);
  }
}

function tokens(value: unknown): string[] {
  if (typeof value === "string") return value === "" ? [] : [value];
  if (Array.isArray(value)) return value.map((item: { val: string }) => item.val);
  return [];
}

function directiveValue(value: unknown): string | string[] {
  const list = tokens(value);
  return typeof value === "string" ? value : list;
}

/** OpenSSH's `match_pattern_list`: comma-separated patterns, a matching `!pattern` excludes. */
function matchPatternList(text: string, list: string, lowerCase: boolean): boolean {
  let matched = false;
  for (const raw of list.split(",")) {
    const negated = raw.startsWith("!");
    const pattern = negated ? raw.slice(1) : raw;
    if (!matchPattern(lowerCase ? pattern.toLowerCase() : pattern, text)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** OpenSSH's `Host` line: any pattern matches the name as given (case-sensitive), unless a `!pattern` does. */
function hostLineMatches(patterns: string[], host: string): boolean {
  let matched = false;
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    if (!matchPattern(negated ? raw.slice(1) : raw, host)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** One evaluation: the values obtained so far and the pass it is in. */
interface Evaluation {
  query: HostQuery;
  values: HostConfig;
  /** The second pass a `Match final` asked for. */
  final: boolean;
  wantFinal: boolean;
  /** The name `Host` lines are matched against: the name given, and the `HostName` in the final pass. */
  hostForHostLines: string;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The `HostName` obtained so far with `%h` and `%%` expanded, else the name given. */
function currentHostName(evaluation: Evaluation): string {
  const hostName = first(evaluation.values.hostname);
  if (hostName === undefined) return evaluation.query.host;
  return hostName.replace(/%([%h])/g, (_, token: string) => (token === "%" ? "%" : evaluation.query.host));
}

function currentUser(evaluation: Evaluation): string {
  return first(evaluation.values.user) ?? evaluation.query.localUser;
}

/** Whether a `Match` line's criteria all hold; see the module comment for `exec`. */
function matchLineHolds(file: string, criteria: string[], evaluation: Evaluation): boolean {
  if (criteria.length === 0) throw configError(file, "Match needs at least one criterion");
  let holds = true;
  let exec = false;
  let seen = 0; // criteria before this one
  for (let index = 0; index < criteria.length; index++) {
    const raw = criteria[index];
    const negated = raw.startsWith("!");
    const keyword = (negated ? raw.slice(1) : raw).toLowerCase();
    const outcome = (result: boolean) => {
      if (result === negated) holds = false;
    };
    if (keyword === "all") {
      // OpenSSH's rule, as its 9.2 applies it: `all` comes last, after at most one other criterion of any kind.
      if (seen > 1 || index !== criteria.length - 1) {
        throw configError(file, "Match all must come last, after at most one other criterion");
      }
      outcome(true);
      continue;
    }
    seen += 1;
    if (keyword === "canonical" || keyword === "final") {
      if (keyword === "final") evaluation.wantFinal = true;
      outcome(evaluation.final);
      continue;
    }
    const argument = criteria[++index];
    if (argument === undefined) throw configError(file, `Match ${raw} needs an argument`);
    switch (keyword) {
      case "host":
        outcome(matchPatternList(currentHostName(evaluation).toLowerCase(), argument, true));
        break;
      case "originalhost":
        outcome(matchPatternList(evaluation.query.host.toLowerCase(), argument, true));
        break;
      case "user":
        outcome(matchPatternList(currentUser(evaluation), argument, false));
        break;
      case "localuser":
        outcome(matchPatternList(evaluation.query.localUser, argument, false));
        break;
      case "exec":
        exec = true;
        break;
      default:
        throw configError(file, `Match ${raw} is not a criterion Outpost knows`);
    }
  }
  if (exec && holds) {
    throw configError(
      file,
      "Match exec decides whether this block applies, and Outpost never runs commands from an ssh config " +
        "(use a config file without it: configFile)",
    );
  }
  return holds;
}

/**
 * This machine's home: `os.homedir()`, which on POSIX is `$HOME` when set, read here from `process.env` so that a
 * worker thread's own environment counts (libuv reads the process's, which a thread's `process.env` does not change).
 */
export function localHome(): string {
  return (process.platform !== "win32" && process.env.HOME) || homedir();
}

/** An `Include` argument as a path pattern: `~/` is the home, a relative path is under `~/.ssh`. */
function includePattern(file: string, argument: string): string {
  if (argument === "~") return localHome();
  if (argument.startsWith("~/")) return join(localHome(), argument.slice(2));
  if (argument.startsWith("~")) throw configError(file, `Include ${argument}: ~user is not supported`);
  return isAbsolute(argument) ? argument : join(localHome(), ".ssh", argument);
}

function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** A glob(7) segment as a regular expression: `*`, `?`, `[…]` (with `!` or `^` negation); `\` quotes. */
function segmentPattern(segment: string): RegExp {
  let source = "";
  for (let index = 0; index < segment.length; index++) {
    const char = segment[index];
    if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else if (char === "\\" && index + 1 < segment.length) source += escapeRegex(segment[++index]);
    else if (char === "[") {
      const close = segment.indexOf("]", index + 2);
      if (close < 0) {
        source += "\\[";
        continue;
      }
      let body = segment.slice(index + 1, close);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      source += `[${negated ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      index = close;
    } else source += escapeRegex(char);
  }
  return new RegExp(`^${source}$`, "s");
}

async function isDirectory(path: string): Promise<boolean> {
  return readdir(path).then(
    () => true,
    () => false,
  );
}

/** The pattern's path segments and the root they start from (`/`, or a drive on Windows, where `\` separates). */
function splitPattern(pattern: string): { root: string; segments: string[] } {
  const segments = process.platform === "win32" ? pattern.split(/[\\/]/) : pattern.split("/");
  const head = segments[0];
  return { root: head === "" ? "/" : /^[A-Za-z]:$/.test(head) ? `${head}\\` : head, segments };
}

/** glob(3) without flags: the existing paths matching `pattern`, in lexical order. */
export async function globPaths(pattern: string): Promise<string[]> {
  const { root, segments } = splitPattern(pattern);
  let bases = [root];
  for (const [position, segment] of segments.slice(1).entries()) {
    const last = position === segments.length - 2;
    if (segment === "") continue;
    const next: string[] = [];
    for (const base of bases) {
      if (!hasMagic(segment)) {
        next.push(join(base, segment));
        continue;
      }
      const names = await readdir(base).catch(() => [] as string[]);
      const regex = segmentPattern(segment);
      for (const name of names) {
        // As glob(3): a leading dot is only matched by a leading dot in the pattern.
        if (name.startsWith(".") && !segment.startsWith(".")) continue;
        if (regex.test(name)) next.push(join(base, name));
      }
    }
    bases = last
      ? next
      : (await Promise.all(next.map(async (path) => ((await isDirectory(path)) ? path : "")))).filter(Boolean);
  }
  const existing = await Promise.all(
    bases.map((path) =>
      lstat(path).then(
        () => path,
        () => "",
      ),
    ),
  );
  return existing.filter(Boolean).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * OpenSSH's rule for included files, as Debian builds it: owned by this user or root, not writable by others, and
 * writable by its group only when that is this user's own group.
 */
function safelyOwned(info: Stats): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  if (info.uid !== uid && info.uid !== 0) return false;
  if ((info.mode & 0o002) !== 0) return false;
  return (info.mode & 0o020) === 0 || info.gid === process.getgid?.();
}

/**
 * An included file, unless it is missing (whoever can write it decides where Outpost connects, so it must pass
 * {@link safelyOwned}).
 */
async function readIncluded(path: string): Promise<ConfigFile | undefined> {
  let text: string;
  try {
    const target = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    // A pattern's match that vanished, or a dangling link: nothing to read, as for a pattern matching nothing.
    if (target === undefined) return undefined;
    // OpenSSH reads an included directory as an empty file.
    if (target.isDirectory()) return undefined;
    if (!safelyOwned(target)) throw configError(path, "bad owner or permissions on an included ssh config file");
    text = await readFile(path, "utf8");
  } catch (error) {
    if (error instanceof SshError) throw error;
    throw configError(path, `cannot read an included ssh config file: ${(error as Error).message}`, error);
  }
  return parseConfig(path, text);
}

async function applyInclude(file: string, line: Line, evaluation: Evaluation, depth: number): Promise<void> {
  if (depth >= MAX_INCLUDE_DEPTH) throw configError(file, `more than ${MAX_INCLUDE_DEPTH} nested Include levels`);
  // Never empty: the parser refuses an Include without a value (refuseMissingValues).
  const argumentsOf = tokens((line as { value: unknown }).value);
  for (const argument of argumentsOf) {
    for (const path of await globPaths(includePattern(file, argument))) {
      const included = await readIncluded(path);
      if (included !== undefined) await applyFile(included, evaluation, depth + 1);
    }
  }
}

async function applyDirective(file: string, line: Line, evaluation: Evaluation, depth: number): Promise<void> {
  if (line.type !== LineType.DIRECTIVE) return;
  const keyword = line.param.toLowerCase();
  if (keyword === "include") return applyInclude(file, line, evaluation, depth);
  const value = directiveValue(line.value);
  if (LIST_KEYWORDS.has(keyword)) {
    const list = (evaluation.values[keyword] ?? []) as string[];
    evaluation.values[keyword] = [...list, ...(Array.isArray(value) ? value : [value])];
  } else if (evaluation.values[keyword] === undefined) {
    evaluation.values[keyword] = value;
  }
}

/** Applies one file's lines: those before its first `Host`/`Match`, then each block that matches. */
async function applyFile(config: ConfigFile, evaluation: Evaluation, depth: number): Promise<void> {
  for (const line of config.lines) {
    if (line.type !== LineType.DIRECTIVE) continue;
    const keyword = line.param.toLowerCase();
    if (keyword !== "host" && keyword !== "match") {
      await applyDirective(config.path, line, evaluation, depth);
      continue;
    }
    const criteria = tokens(line.value);
    const applies =
      keyword === "host"
        ? hostLineMatches(criteria, evaluation.hostForHostLines)
        : matchLineHolds(config.path, criteria, evaluation);
    if (!applies || !("config" in line)) continue;
    for (const inner of line.config) await applyDirective(config.path, inner, evaluation, depth);
  }
}

/**
 * The values `config` gives `query.host`, OpenSSH's way (see the module comment). A second pass runs when a
 * `Match final` asked for one, matching `Host` lines against the `HostName` the first pass found.
 */
export async function hostConfig(config: ConfigFile | undefined, query: HostQuery): Promise<HostConfig> {
  const evaluation: Evaluation = {
    query,
    values: query.user === undefined ? {} : { user: query.user },
    final: false,
    wantFinal: false,
    hostForHostLines: query.host,
  };
  if (config === undefined) return evaluation.values;
  await applyFile(config, evaluation, 0);
  if (evaluation.wantFinal) {
    evaluation.final = true;
    evaluation.hostForHostLines = currentHostName(evaluation);
    await applyFile(config, evaluation, 0);
  }
  return evaluation.values;
}
