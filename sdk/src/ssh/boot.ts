/**
 * The start of the agent on a POSIX target in one remote command (spec/semantics.md SSH7): one script probes the
 * system, picks the agent this SDK carries for it, verifies the file's SHA-256 and, only if it verifies, `exec`s it
 * on the same channel, whose stdin and stdout then become the agent's. When the agent is missing or does not
 * verify, the script says so and exits; the caller uploads it (one more command) and boots again.
 *
 * The script reports after a marker that carries a random nonce, so neither a startup file's output nor the
 * agent's frames can pass for it: the probe's four lines, then `start <sha256>` or `need <what the hash said>`.
 * Everything before the marker (startup-file noise) is kept in front of the agent's stdout, where the connection's
 * search for the sync line hands it to `onLog`.
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { PassThrough, type Readable, type Writable } from "node:stream";
import type { AgentProcess } from "../wire/connection.js";
import { HASH_FUNCTION } from "./deploy.js";
import { SshError } from "./errors.js";
import { type Probe, probeOf } from "./platform.js";
import { printMarker, scriptLine } from "./remote-script.js";
import { SSH_SESSION_VARIABLES } from "./session-variables.js";

const MARKER = "OUTPOST-BOOT";
const HEADER_LINES = 5;
const HEADER_TIMEOUT_MS = 60_000;
/** Startup-file output allowed before the marker; more is a broken account, not a slow one. */
const NOISE_LIMIT = 4 * 1024 * 1024;

/**
 * `$1` the marker's nonce, `$2` the agent table (`<platform>-<arch>=<sha256>` words, or `any=<sha256>`), then the
 * agent's arguments. `set -f`: the table's words are not globbed.
 */
const BOOT_SCRIPT = [
  `set -f; ${HASH_FUNCTION};`,
  `${printMarker('"$1"')};`,
  "s=$(uname -s); m=$(uname -m); o=$(uname -o 2>/dev/null || echo -);",
  `printf '%s\\n' "$s" "$m" "$o" "$HOME";`,
  'case "$m" in x86_64|amd64|x64) a=x64;; aarch64|arm64) a=arm64;; *) a=$m;; esac;',
  'case "$s" in Linux) if [ "$o" = Android ]; then p=android; else p=linux; fi;; Darwin) p=darwin;; *) p=$s;; esac;',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh's ${e#*=}, not a template
  'h=; for e in $2; do case "$e" in "$p-$a="*|any=*) h=${e#*=};; esac; done; shift 2;',
  'if [ -z "$h" ]; then echo "need none"; exit 0; fi;',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh's ${HOME%/}, not a template
  'f="${HOME%/}/.outpost/bin/outpost-$h"; v=$(outpost_hash "$f");',
  // Verified, then run at once by the same shell: the check is right before the exec.
  `case "$v" in *"$h"*) echo "start $h"; exec env ${SSH_SESSION_VARIABLES.map((name) => `-u ${name}`).join(" ")} "$f" "$@";; esac;`,
  'echo "need $v"',
].join(" ");

/** What one boot command found. */
export type BootOutcome =
  | { kind: "start"; probe: Probe; sha256: string; agent: AgentProcess }
  | { kind: "need"; probe: Probe | undefined; hash: string }
  /** No POSIX shell answered (Windows through cmd, or a shell that swallowed the script). */
  | { kind: "none"; output: string };

/** The boot command's stdin line for `table` and the agent's `args`, and the marker its report follows. */
export function bootLine(table: readonly string[], args: readonly string[]): { line: string; marker: string } {
  const nonce = randomBytes(8).toString("hex");
  return {
    line: scriptLine(BOOT_SCRIPT, [`${MARKER}-${nonce}`, table.join(" "), ...args]),
    marker: `${MARKER}-${nonce}`,
  };
}

/**
 * Writes the boot line to `process` (started as `SCRIPT_COMMAND`; its stdin stays open for the agent) and reads its
 * report. A started agent is returned with a stdout that carries the startup noise and then the agent's output;
 * otherwise the command has ended.
 */
export function readBoot(process: AgentProcess, line: string, marker: string): Promise<BootOutcome> {
  return new Promise((resolve, reject) => {
    const markerBytes = Buffer.from(`\n${marker}\n`);
    let buffered = Buffer.alloc(0);
    let stderr = "";
    let settled = false;
    const onStderr = (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    };
    const finish = (outcome: BootOutcome | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      process.stdout.removeListener("data", onData);
      process.stderr.removeListener("data", onStderr);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => {
      process.kill();
      finish(new SshError("remote", `The agent's start did not report within ${HEADER_TIMEOUT_MS / 1000} s`));
    }, HEADER_TIMEOUT_MS);
    const onClose = () => {
      if (settled) return;
      const header = parseHeader(buffered, markerBytes);
      if (header?.status.startsWith("need ")) {
        finish({ kind: "need", probe: header.probe, hash: header.status.slice(5) });
      } else {
        finish({ kind: "none", output: `${buffered.toString("utf8")}${stderr}`.trim().slice(-400) });
      }
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const header = parseHeader(buffered, markerBytes);
      if (header === undefined) {
        if (buffered.length > NOISE_LIMIT) {
          process.kill();
          finish(new SshError("remote", "The account's shell printed more than 4 MiB before the agent's start"));
        }
        return;
      }
      if (!header.status.startsWith("start ")) return; // "need": the command ends; its close settles.
      if (header.probe === undefined) {
        process.kill();
        finish(new SshError("platform", "The agent's start reported an unreadable probe"));
        return;
      }
      process.stdout.removeListener("data", onData);
      process.stdout.pause();
      const stdout = new PassThrough();
      // The noise before the marker stays in front of the agent's output: the sync search logs it.
      stdout.write(Buffer.concat([header.noise, header.rest]));
      process.stdout.pipe(stdout);
      process.stdout.resume();
      finish({
        kind: "start",
        probe: header.probe,
        sha256: header.status.slice(6),
        agent: withStdout(process, stdout),
      });
    };
    process.stdout.on("data", onData);
    process.stderr.on("data", onStderr);
    process.on("close", onClose);
    // A local program that cannot start (the `ssh` of the OpenSSH transport missing).
    process.on("error", (error) =>
      finish(new SshError("connect", `Cannot start the SSH command: ${error.message}`, error)),
    );
    process.stdin.on("error", () => {}); // A command that ends early closes its input; its close settles.
    process.stdin.write(line);
  });
}

interface Header {
  noise: Buffer;
  probe: Probe | undefined;
  status: string;
  rest: Buffer;
}

/** The report after the marker once all its lines are in; `undefined` until then. */
function parseHeader(buffered: Buffer, markerBytes: Buffer): Header | undefined {
  const at = buffered.indexOf(markerBytes);
  if (at < 0) return undefined;
  let end = at + markerBytes.length;
  const lines: string[] = [];
  while (lines.length < HEADER_LINES) {
    const newline = buffered.indexOf(10, end);
    if (newline < 0) return undefined;
    lines.push(buffered.subarray(end, newline).toString("utf8").replace(/\r$/, ""));
    end = newline + 1;
  }
  return {
    noise: buffered.subarray(0, at + 1),
    probe: probeOf(lines.slice(0, 4)),
    status: lines[4].trim(),
    rest: buffered.subarray(end),
  };
}

/** `process` with its stdout replaced by `stdout` (the agent's output after the boot report). */
function withStdout(process: AgentProcess, stdout: Readable): AgentProcess {
  return new (class extends EventEmitter implements AgentProcess {
    readonly stdin: Writable = process.stdin;
    readonly stdout: Readable = stdout;
    readonly stderr: Readable = process.stderr;
    get exitCode() {
      return process.exitCode;
    }
    get signalCode() {
      return process.signalCode;
    }
    get pid() {
      return process.pid;
    }
    kill(signal?: NodeJS.Signals) {
      return process.kill(signal);
    }
    ref() {
      process.ref();
    }
    unref() {
      process.unref();
    }
    override on(event: string, listener: (...args: never[]) => void): this {
      process.on(event as "exit", listener as () => void);
      return this;
    }
    override once(event: string, listener: (...args: never[]) => void): this {
      process.once(event as "exit", listener as () => void);
      return this;
    }
  })();
}
