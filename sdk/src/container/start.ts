/**
 * A warm start in one engine round trip: `exec -i … sh -c` hashes the agent in the container and, only if its
 * SHA-256 is the expected one, `exec`s it in the same process (spec/semantics.md CT1: never run an unverified copy).
 * The script prints a line saying which way it went before anything else, so the launcher knows whether it got an
 * agent or must deploy first; the agent's own output follows on the same pipe.
 */
import { spawn } from "node:child_process";
import type { AgentProcess } from "../wire/connection.js";
import { HASH_FUNCTION } from "./deploy.js";
import { type EngineTarget, execArgv } from "./engine.js";

const VERIFIED = "OUTPOST-VERIFIED";
/** Runs "$1" with the rest of the arguments if its hash contains "$2" (the expected SHA-256), else says so. */
const START_SCRIPT = [
  HASH_FUNCTION,
  'p=$1; want=$2; shift 2; got=$(h "$p")',
  `case "$got" in *"$want"*) echo ${VERIFIED}; exec "$p" "$@";; esac`,
  "echo OUTPOST-UNVERIFIED",
].join("\n");
/** How long the container's shell may take to say whether the agent verified. */
const VERDICT_TIMEOUT_MS = 60_000;
/** The verdict is one short line; more without a newline is not our script talking. */
const VERDICT_LIMIT = 256;

/**
 * Starts the agent at `path` with `args` if its SHA-256 in the container is `sha256`; `undefined` if it is not
 * (missing, truncated, tampered, no tool to hash with) or the engine failed: then the caller verifies or deploys
 * in separate steps, which name the reason.
 */
export async function startIfVerified(
  target: EngineTarget,
  path: string,
  sha256: string,
  args: readonly string[],
): Promise<AgentProcess | undefined> {
  const argv = execArgv(target, ["sh", "-c", START_SCRIPT, "outpost-start", path, sha256, ...args], { workdir: true });
  const child = spawn(argv[0], argv.slice(1), { stdio: "pipe", windowsHide: true });
  const verdict = await new Promise<string>((resolve) => {
    let seen = Buffer.alloc(0);
    const done = (line: string, rest?: Buffer) => {
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.off("exit", onExit);
      child.off("error", onError);
      if (rest !== undefined && rest.length > 0) child.stdout.unshift(rest);
      resolve(line);
    };
    // Paused once the line is in, the rest put back for the connection, which resumes the stream.
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const newline = seen.indexOf(10);
      if (newline >= 0) {
        child.stdout.pause();
        done(seen.subarray(0, newline).toString("utf8").trim(), seen.subarray(newline + 1));
      } else if (seen.length > VERDICT_LIMIT) done("");
    };
    const onExit = () => done("");
    const onError = () => done("");
    const timer = setTimeout(() => done(""), VERDICT_TIMEOUT_MS);
    child.stdout.on("data", onData);
    child.once("exit", onExit);
    child.once("error", onError);
  });
  if (verdict === VERIFIED) return child;
  // Not verified, or the engine failed (a stopped or missing container): the separate steps report why.
  child.kill("SIGKILL");
  return undefined;
}
