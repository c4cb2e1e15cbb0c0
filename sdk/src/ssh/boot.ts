/**
 * The start of the agent on a POSIX target in one remote command (spec/semantics.md SSH7): one script probes the
 * system, picks the agent this SDK carries for it, verifies the file's SHA-256 and, only if it verifies, `exec`s it
 * on the same channel, whose stdin and stdout then become the agent's. When the agent is missing or does not
 * verify, the script says so and exits; the caller uploads it and starts it in one more command where the remote's
 * `head -c` reads exactly (GNU's), else uploads it in one command and boots again.
 *
 * The script reports after a marker that carries a random nonce, so neither a startup file's output nor the
 * agent's frames can pass for it: the probe's four lines, then `start <sha256>` or `need <exact|stream> <what the
 * hash said>` (`need - <what failed>` from an upload).
 * Everything before the marker (startup-file noise) is kept in front of the agent's stdout, where the connection's
 * search for the sync line hands it to `onLog`.
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ReadStream } from "node:fs";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { agentUploadName, type LocalAgent } from "../env/agent-deploy.js";
import type { AgentProcess } from "../wire/connection.js";
import { CLEANUP, HASH_FUNCTION } from "./deploy.js";
import { SshError } from "./errors.js";
import { type Probe, probeOf } from "./platform.js";
import { UPLOAD_TIMEOUT_MS } from "./remote-command.js";
import { printMarker, type ScriptData, scriptLine, sendScriptData } from "./remote-script.js";
import { SSH_SESSION_VARIABLES } from "./session-variables.js";

const MARKER = "OUTPOST-BOOT";
const HEADER_LINES = 5;
const HEADER_TIMEOUT_MS = 60_000;
/** Startup-file output allowed before the marker; more is a broken account, not a slow one. */
const NOISE_LIMIT = 4 * 1024 * 1024;

/** Prints the probe's four lines; leaves `$p`-`$a` (the SDK's platform and arch names) for the script after it. */
const PROBE = [
  "s=$(uname -s); m=$(uname -m); o=$(uname -o 2>/dev/null || echo -);",
  `printf '%s\\n' "$s" "$m" "$o" "$HOME";`,
  'case "$m" in x86_64|amd64|x64) a=x64;; aarch64|arm64) a=arm64;; *) a=$m;; esac;',
  'case "$s" in Linux) if [ "$o" = Android ]; then p=android; else p=linux; fi;; Darwin) p=darwin;; *) p=$s;; esac;',
].join(" ");

/** `exec`s the agent `$f` with the script's remaining arguments, SSH1's variables removed. */
const EXEC_AGENT = `exec env ${SSH_SESSION_VARIABLES.map((name) => `-u ${name}`).join(" ")} "$f" "$@"`;

/**
 * Whether this remote's `head -c N` reads exactly N bytes of its stdin and no more: GNU's does (it reads no more
 * than it still has to write); BusyBox's and the BSDs' go through stdio, which may read ahead and would swallow the
 * agent's first requests. Only then can an upload and the agent's start share one channel.
 */
const EXACT_HEAD = "if head --version 2>/dev/null | grep -q 'GNU coreutils'; then x=exact; else x=stream; fi;";

/**
 * `$1` the marker's nonce, `$2` the agent table (`<platform>-<arch>=<sha256>` words, or `any=<sha256>`), then the
 * agent's arguments. `set -f`: the table's words are not globbed.
 */
const BOOT_SCRIPT = [
  `set -f; ${HASH_FUNCTION};`,
  `${printMarker('"$1"')};`,
  PROBE,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh's ${e#*=}, not a template
  'h=; for e in $2; do case "$e" in "$p-$a="*|any=*) h=${e#*=};; esac; done; shift 2;',
  `if [ -z "$h" ]; then ${EXACT_HEAD} echo "need $x none"; exit 0; fi;`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh's ${HOME%/}, not a template
  'f="${HOME%/}/.outpost/bin/outpost-$h"; v=$(outpost_hash "$f");',
  // Verified, then run at once by the same shell: the check is right before the exec.
  `case "$v" in *"$h"*) echo "start $h"; ${EXEC_AGENT};; esac;`,
  `${EXACT_HEAD} echo "need $x $v"`,
].join(" ");

/**
 * The upload and the start on one channel, for a remote whose `head -c` reads exactly (`EXACT_HEAD`): `$1` the
 * directory, `$2` the temporary name, `$3` the final name, `$4` the SHA-256 (the order SSH2's cleanup reads), `$5`
 * the binary's size, `$6` the marker's nonce, then the agent's arguments; the binary follows the script's line on
 * stdin, and the agent's requests follow the binary. The file is written (0755 in a 0700 directory) under the
 * temporary name, hashed, renamed only if it verifies, hashed again under its final name and `exec`ed only if that
 * verifies too. Reports as the boot does: the probe, then `start <sha256>` or `need - <what failed>`. A failed step
 * exits without reading the rest of the binary (the client's writes then go nowhere).
 */
const UPLOAD_BOOT_SCRIPT = [
  `${HASH_FUNCTION}; umask 077;`,
  `${printMarker('"$6"')};`,
  PROBE,
  'if ! { mkdir -p -- "$1" && chmod 700 -- "$1" && head -c "$5" > "$2" && chmod 755 -- "$2"; }; then',
  'rm -f -- "$2"; echo "need - write failed"; exit 1; fi;',
  'u=$(outpost_hash "$2");',
  'case "$u" in *"$4"*) ;; *) rm -f -- "$2"; echo "need - corrupt upload $u"; exit 1;; esac;',
  'if ! mv -f -- "$2" "$3"; then rm -f -- "$2"; echo "need - rename failed"; exit 1; fi;',
  `${CLEANUP};`,
  'f=$3; v=$(outpost_hash "$f"); h=$4; shift 6;',
  `case "$v" in *"$h"*) echo "start $h"; ${EXEC_AGENT};; esac;`,
  'echo "need - final name does not verify $v"',
].join(" ");
/** What one boot command found. */
export type BootOutcome =
  | { kind: "start"; probe: Probe; sha256: string; agent: AgentProcess }
  /**
   * Not started: `hash` is what the hash said (`missing`, another hash, `none` for no agent in the table) or, after
   * an upload, what failed; `exactRead` says the remote can take an upload and the start on one channel.
   */
  | { kind: "need"; probe: Probe | undefined; hash: string; exactRead: boolean; stderr: string }
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
 * The stdin line of the command that uploads `agent` to `finalPath` and starts it with `args` (a remote whose boot
 * said `exactRead`); the binary follows the line (`readBoot`'s `data`).
 */
export function uploadBootLine(
  agent: LocalAgent,
  finalPath: string,
  args: readonly string[],
): { line: string; marker: string } {
  const nonce = randomBytes(8).toString("hex");
  const dir = finalPath.slice(0, finalPath.lastIndexOf("/"));
  const temp = agentUploadName(dir, agent.sha256);
  const marker = `${MARKER}-${nonce}`;
  return {
    line: scriptLine(UPLOAD_BOOT_SCRIPT, [dir, temp, finalPath, agent.sha256, String(agent.size), marker, ...args]),
    marker,
  };
}

/**
 * Writes the boot line to `process` (started as `SCRIPT_COMMAND`; its stdin stays open for the agent) and reads its
 * report. A started agent is returned with a stdout that carries the startup noise and then the agent's output;
 * otherwise the command has ended.
 */
export function readBoot(process: AgentProcess, line: string, marker: string, data?: ScriptData): Promise<BootOutcome> {
  return new Promise((resolve, reject) => {
    const markerBytes = Buffer.from(`\n${marker}\n`);
    let buffered = Buffer.alloc(0);
    let stderr = "";
    let settled = false;
    const onStderr = (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    };
    let file: ReadStream | undefined;
    const finish = (outcome: BootOutcome | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A script that stopped early leaves the rest unread: the file is not held open for it.
      file?.destroy();
      process.stdout.removeListener("data", onData);
      process.stderr.removeListener("data", onStderr);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    // An upload's report comes after the binary went through.
    const timeoutMs = data === undefined ? HEADER_TIMEOUT_MS : UPLOAD_TIMEOUT_MS;
    const timer = setTimeout(() => {
      process.kill();
      finish(new SshError("remote", `The agent's start did not report within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onClose = () => {
      if (settled) return;
      const header = parseHeader(buffered, markerBytes);
      if (header?.status.startsWith("need ")) {
        const [mode, ...said] = header.status.slice(5).split(" ");
        const hash = said.join(" ");
        finish({ kind: "need", probe: header.probe, hash, exactRead: mode === "exact", stderr: stderr.trim() });
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
    if (data !== undefined) {
      // The stdin stays open: the agent's requests follow the binary.
      file = sendScriptData(process.stdin, data, false);
      file.on("error", (error) => {
        process.kill();
        finish(new SshError("deploy", `Cannot read the agent ${data.path}: ${error.message}`));
      });
    }
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
