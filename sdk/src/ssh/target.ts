/**
 * From a target string and options to a route: `user@host:port` or an ssh config `Host` alias, resolved through the
 * ssh config file (`HostName`, `User`, `Port`, `IdentityFile`, `ProxyJump`, `ServerAliveInterval`,
 * `ServerAliveCountMax`, `ConnectTimeout`, `HostKeyAlias`; with its `Include`s and `Match` blocks) into the hops to connect through, each with what it needs to authenticate and be
 * trusted.
 */
import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { join } from "node:path";
import { SshError } from "./errors.js";
import { knownHostsName } from "./known-hosts.js";
import { type ConfigFile, type HostConfig, hostConfig, localHome, parseConfig } from "./ssh-config.js";

/** How to reach, authenticate to and trust an SSH target. Every path may start with `~/`. */
export interface SshTargetOptions {
  /** The ssh config file to read (default `~/.ssh/config` when it exists); `false` reads none. */
  configFile?: string | false;
  /** The user (overrides the target's `user@` and the config's `User`). */
  user?: string;
  /** The port (overrides the target's `:port` and the config's `Port`). */
  port?: number;
  /** Private key files to offer, in order (default: the config's `IdentityFile`s, else `~/.ssh/id_*`). */
  identityFiles?: readonly string[];
  /** The ssh-agent socket (default `SSH_AUTH_SOCK`); `false` uses no agent. */
  agent?: string | false;
  /** Asked for the passphrase of an encrypted key file; `undefined` skips that key. */
  passphrase?: (keyFile: string) => string | undefined | Promise<string | undefined>;
  /**
   * Asked for a password (password and keyboard-interactive authentication, which are not tried without it);
   * `prompt` is the server's prompt, `"Password:"` for password authentication. `undefined` gives up on the method.
   */
  password?: (request: {
    user: string;
    host: string;
    prompt: string;
  }) => string | undefined | Promise<string | undefined>;
  /** Jump hosts, `host1,host2` as in `ssh -J` (default: the config's `ProxyJump`); `false` or `"none"` for none. */
  proxyJump?: string | false;
  /** Seconds to connect, handshake and authenticate per hop (default: the config's `ConnectTimeout`, else 20). */
  connectTimeout?: number;
  /** Seconds between SSH keepalives (default: the config's `ServerAliveInterval`, else none). */
  serverAliveInterval?: number;
  /**
   * Keepalives left unanswered before the connection counts as lost (default: the config's `ServerAliveCountMax`,
   * else 3, as OpenSSH).
   */
  serverAliveCountMax?: number;
  /** Outpost's known-hosts file, where `acceptHostKey` writes (default `~/.outpost/known_hosts`). */
  knownHostsFile?: string;
  /** More known-hosts files read as trusted, never written (default `["~/.ssh/known_hosts"]`). */
  trustedKnownHostsFiles?: readonly string[];
}

/** One SSH server on the way to the target (the last hop is the target). */
export interface Hop {
  /** The name as given (alias or host). */
  alias: string;
  /** The address to connect to. */
  hostName: string;
  port: number;
  user: string;
  /** The name its keys are stored under in known-hosts files. */
  knownHostsName: string;
  identityFiles: string[];
  connectTimeoutMs: number;
  /** Milliseconds between keepalives; 0 for none. */
  keepaliveMs: number;
  /** Unanswered keepalives after which the connection is lost. */
  keepaliveCountMax: number;
}

/** The hops in connection order and the trust files that apply to all of them. */
export interface Route {
  hops: Hop[];
  knownHostsFile: string;
  trustFiles: string[];
}

const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f]/;

/** Expands a leading `~/` (and a lone `~`) to this machine's home. */
export function expandHome(path: string): string {
  if (path === "~") return localHome();
  return path.startsWith("~/") ? join(localHome(), path.slice(2)) : path;
}

function invalid(message: string): SshError {
  return new SshError("invalid", message);
}

function checkName(what: string, value: string): void {
  if (value === "" || value.startsWith("-") || CONTROL_OR_SPACE.test(value)) {
    throw invalid(`Invalid ${what}: ${JSON.stringify(value)}`);
  }
}

function checkPort(what: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) {
    throw invalid(`Invalid ${what}: ${JSON.stringify(value)} (an integer from 1 to 65535)`);
  }
  return value;
}

function checkSeconds(what: string, value: unknown, allowZero: boolean): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw invalid(`Invalid ${what}: ${JSON.stringify(value)} (a ${allowZero ? "non-negative" : "positive"} number)`);
  }
  return value;
}

function checkCount(what: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalid(`Invalid ${what}: ${JSON.stringify(value)} (a positive integer)`);
  }
  return value;
}

function checkPathList(what: string, value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item !== "")) {
    throw invalid(`Invalid ${what}: expected an array of non-empty paths`);
  }
  return value as string[];
}

/** Checks every option's type and range before anything is attempted. */
export function validateTargetOptions(options: SshTargetOptions): void {
  if (typeof options !== "object" || options === null) throw invalid("Invalid options: expected an object");
  const { configFile, user, port, agent, passphrase, password, proxyJump, knownHostsFile } = options;
  if (configFile !== undefined && configFile !== false && (typeof configFile !== "string" || configFile === "")) {
    throw invalid("Invalid configFile: expected a path or false");
  }
  if (user !== undefined) {
    if (typeof user !== "string") throw invalid("Invalid user: expected a string");
    checkName("user", user);
  }
  if (port !== undefined) checkPort("port", port);
  if (options.identityFiles !== undefined) checkPathList("identityFiles", options.identityFiles);
  if (options.trustedKnownHostsFiles !== undefined) {
    checkPathList("trustedKnownHostsFiles", options.trustedKnownHostsFiles);
  }
  if (agent !== undefined && agent !== false && (typeof agent !== "string" || agent === "")) {
    throw invalid("Invalid agent: expected a socket path or false");
  }
  if (passphrase !== undefined && typeof passphrase !== "function")
    throw invalid("Invalid passphrase: expected a function");
  if (password !== undefined && typeof password !== "function") throw invalid("Invalid password: expected a function");
  if (proxyJump !== undefined && proxyJump !== false && (typeof proxyJump !== "string" || proxyJump === "")) {
    throw invalid("Invalid proxyJump: expected a host list or false");
  }
  if (options.connectTimeout !== undefined) checkSeconds("connectTimeout", options.connectTimeout, false);
  if (options.serverAliveInterval !== undefined) checkSeconds("serverAliveInterval", options.serverAliveInterval, true);
  if (options.serverAliveCountMax !== undefined) checkCount("serverAliveCountMax", options.serverAliveCountMax);
  if (knownHostsFile !== undefined && (typeof knownHostsFile !== "string" || knownHostsFile === "")) {
    throw invalid("Invalid knownHostsFile: expected a path");
  }
}

/**
 * Checks that every key file the options name (`identityFiles`, the CLI's `-i`) can be read, so a missing or
 * unreadable one fails at once as a `config` error naming the file, before any connection, rather than as an
 * authentication failure after one. The default keys and the config's `IdentityFile`s may be missing, as in OpenSSH.
 */
export async function checkIdentityFiles(options: SshTargetOptions): Promise<void> {
  for (const file of options.identityFiles ?? []) {
    const path = expandHome(file);
    try {
      await readFile(path);
    } catch (error) {
      throw new SshError("config", `Cannot read the identity file ${path}: ${(error as Error).message}`, error);
    }
  }
}

/**
 * A target string's parts: `[user@]host[:port]`, `[user@][host]:port` (brackets for an IPv6 address with a port),
 * or a bare IPv6 address. The user is everything before the last `@`.
 */
export interface ParsedTarget {
  user?: string;
  host: string;
  port?: number;
}

/** Splits a target string; throws an `invalid` {@link SshError} for a malformed one. */
export function parseTarget(target: string): ParsedTarget {
  if (typeof target !== "string") throw invalid("Invalid target: expected a string such as user@host:port");
  const at = target.lastIndexOf("@");
  const user = at >= 0 ? target.slice(0, at) : undefined;
  let rest = at >= 0 ? target.slice(at + 1) : target;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1];
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else {
    const colon = rest.lastIndexOf(":");
    // More than one colon without brackets is an IPv6 address with no port.
    if (colon >= 0 && rest.indexOf(":") === colon) {
      const digits = rest.slice(colon + 1);
      if (!/^\d+$/.test(digits)) throw invalid(`Invalid target: ${JSON.stringify(target)} (port is not a number)`);
      port = Number(digits);
      rest = rest.slice(0, colon);
    }
  }
  if (user !== undefined) checkName("user in target", user);
  checkName("host in target", rest);
  // OpenSSH would take `[box` or `x[::1]:22` as a name and fail to resolve it; no host name or address has a
  // bracket, so a stray one is a malformed target, refused before any lookup.
  if (/[[\]]/.test(rest)) throw invalid(`Invalid target: ${JSON.stringify(target)} (unbalanced brackets)`);
  if (port !== undefined) checkPort("port in target", port);
  return { user, host: rest, port };
}

async function loadConfig(options: SshTargetOptions): Promise<ConfigFile | undefined> {
  if (options.configFile === false) return undefined;
  const explicit = options.configFile !== undefined;
  const file = expandHome(options.configFile ?? "~/.ssh/config");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (!explicit && (error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SshError("config", `Cannot read ssh config ${file}: ${(error as Error).message}`, error);
  }
  return parseConfig(file, text);
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function all(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** OpenSSH's `%h`, `%p`, `%r`, `%%` tokens in a config value. */
function expandTokens(value: string, host: string, port: number, user: string): string {
  return value.replace(/%([%hpr])/g, (_, token: string) =>
    token === "%" ? "%" : token === "h" ? host : token === "p" ? String(port) : user,
  );
}

function configNumber(what: string, value: string | undefined, check: (what: string, value: unknown) => number) {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || Number.isNaN(number))
    throw new SshError("config", `Invalid ${what} in ssh config: ${value}`);
  return check(what, number);
}

const DEFAULT_KEYS = ["~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"];
const DEFAULT_CONNECT_TIMEOUT_S = 20;
const DEFAULT_KEEPALIVE_COUNT_MAX = 3;

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? "root";
  }
}

/** Resolves one hop: the target's parts, then the options, then the config, then defaults. */
async function resolveHop(
  target: string,
  config: ConfigFile | undefined,
  options: SshTargetOptions,
  isFinal: boolean,
): Promise<{ hop: Hop; proxyJump: string | undefined }> {
  const parsed = parseTarget(target);
  // The options name the final target; jump hosts take only what their own string and the config say.
  const givenUser = parsed.user ?? (isFinal ? options.user : undefined);
  const values: HostConfig = await hostConfig(config, { host: parsed.host, user: givenUser, localUser: localUser() });
  const user = givenUser ?? first(values.user) ?? localUser();
  checkName("user", user);
  const port =
    parsed.port ??
    (isFinal ? options.port : undefined) ??
    configNumber("Port", first(values.port), (what, value) => checkPort(what, value)) ??
    22;
  const hostName = expandTokens(first(values.hostname) ?? parsed.host, parsed.host, port, user);
  checkName("HostName", hostName);
  const alias = first(values.hostkeyalias);
  const identityFiles =
    isFinal && options.identityFiles !== undefined
      ? [...options.identityFiles]
      : all(values.identityfile).map((file) => expandTokens(file, parsed.host, port, user));
  const timeout =
    (isFinal ? options.connectTimeout : undefined) ??
    configNumber("ConnectTimeout", first(values.connecttimeout), (what, value) => checkSeconds(what, value, false)) ??
    DEFAULT_CONNECT_TIMEOUT_S;
  const keepalive =
    options.serverAliveInterval ??
    configNumber("ServerAliveInterval", first(values.serveraliveinterval), (what, value) =>
      checkSeconds(what, value, true),
    ) ??
    0;
  const keepaliveCountMax =
    options.serverAliveCountMax ??
    configNumber("ServerAliveCountMax", first(values.serveralivecountmax), checkCount) ??
    DEFAULT_KEEPALIVE_COUNT_MAX;
  const hop: Hop = {
    alias: parsed.host,
    hostName,
    port,
    user,
    knownHostsName: knownHostsName(alias ?? hostName, alias === undefined ? port : 22),
    identityFiles: (identityFiles.length > 0 ? identityFiles : DEFAULT_KEYS).map(expandHome),
    connectTimeoutMs: timeout * 1000,
    keepaliveMs: keepalive * 1000,
    keepaliveCountMax,
  };
  return { hop, proxyJump: first(values.proxyjump) };
}

/** The route to `target`: its jump hosts (options, else the config's `ProxyJump`) and then the target itself. */
export async function resolveRoute(target: string, options: SshTargetOptions): Promise<Route> {
  validateTargetOptions(options);
  const config = await loadConfig(options);
  const final = await resolveHop(target, config, options, true);
  const jumpList = options.proxyJump === false ? "none" : (options.proxyJump ?? final.proxyJump ?? "none");
  const jumps =
    jumpList.toLowerCase() === "none"
      ? []
      : await Promise.all(
          jumpList.split(",").map(async (jump) => (await resolveHop(jump.trim(), config, options, false)).hop),
        );
  return {
    hops: [...jumps, final.hop],
    knownHostsFile: expandHome(options.knownHostsFile ?? "~/.outpost/known_hosts"),
    trustFiles: [
      expandHome(options.knownHostsFile ?? "~/.outpost/known_hosts"),
      ...(options.trustedKnownHostsFiles ?? ["~/.ssh/known_hosts"]).map(expandHome),
    ],
  };
}
