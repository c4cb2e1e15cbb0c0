/** How a session stays alive and how it ends: pings and the silence limit, teardown, waiting for the agent's exit. */
import { ChildProcess } from "node:child_process";
import { type AgentSession, refable } from "./agent-session.js";
import { FrameType } from "./frame.js";
import type { RemoteError } from "./remote-error.js";

/** Default ping interval. */
export const PING_INTERVAL_MS = 5_000;
/** Default silence after which the connection counts as lost. */
export const SILENCE_LIMIT_MS = 30_000;
/** How long `close()` waits for the agent to exit after SIGTERM before sending SIGKILL. */
const CLOSE_KILL_MS = 3_000;

/**
 * Pings the agent every `intervalMs` and calls `onSilent` (which tears the session down) once nothing arrived for
 * `silenceLimitMs`. The timer is the session's, cleared by {@link endSession}.
 */
export function startPings(
  session: AgentSession,
  intervalMs: number,
  silenceLimitMs: number,
  onSilent: () => void,
): void {
  let lastTick = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // A tick that comes late means our own event loop was blocked; bytes may be waiting unread, so do not judge.
    const late = now - lastTick > 2 * intervalMs;
    lastTick = now;
    if (!late && now - session.lastSeen > silenceLimitMs) {
      onSilent();
      return;
    }
    session.send(FrameType.ping, 0, {});
  }, intervalMs);
  timer.unref();
  session.timers.push(timer);
}

/**
 * Ends a live session: stops its timers, ends its stdin, kills the agent (unless `kill` is false: the caller gives
 * it time to exit by itself first) and rejects every pending request with `error`. The agent may still be
 * exiting; {@link waitForExit} waits for that.
 */
export function endSession(session: AgentSession, error: RemoteError, kill = true): void {
  session.live = false;
  for (const timer of session.timers) clearTimeout(timer);
  session.timers = [];
  session.writer.end();
  if (kill) killAgent(session);
  const pending = [...session.pending.values()];
  session.pending.clear();
  session.foreground = 0;
  for (const request of pending) request.reject(error);
  // The pipes may stay open in a descendant of the agent; they must not keep the host process alive.
  session.updateRef();
  for (const stream of [session.child.stdout, session.child.stderr]) refable(stream)?.unref();
}

function killAgent(session: AgentSession, signal?: NodeJS.Signals): void {
  try {
    session.child.kill(signal);
  } catch {
    // Already gone.
  }
}

function hasExited(session: AgentSession): boolean {
  const { child } = session;
  // A child process that never got a pid failed to spawn and will never exit.
  const neverStarted = child instanceof ChildProcess && child.pid === undefined;
  return session.exited || neverStarted || child.exitCode !== null || child.signalCode !== null;
}

/**
 * Resolves once the session's agent has exited by itself or `graceMs` have passed, then signals it and waits for
 * its exit ({@link waitForExit}). With a grace of 0 the agent is signalled at once.
 */
export async function stopAfterGrace(session: AgentSession, graceMs: number): Promise<void> {
  if (graceMs > 0 && !hasExited(session)) {
    session.child.ref();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      session.child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  if (!hasExited(session)) killAgent(session);
  await waitForExit(session);
}

/** Resolves once the session's agent has exited, sending SIGKILL if it takes longer than a few seconds. */
export function waitForExit(session: AgentSession): Promise<void> {
  const { child } = session;
  if (hasExited(session)) return Promise.resolve();
  return new Promise((resolve) => {
    // Whoever awaits close() wants to see the exit: keep the event loop alive until it comes.
    child.ref();
    const kill = setTimeout(() => killAgent(session, "SIGKILL"), CLOSE_KILL_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
  });
}
