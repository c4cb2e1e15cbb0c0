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
 * Ends a live session: stops its timers, ends its stdin, kills the agent and rejects every pending request with
 * `error`. The agent may still be exiting; {@link waitForExit} waits for that.
 */
export function endSession(session: AgentSession, error: RemoteError): void {
  session.live = false;
  for (const timer of session.timers) clearTimeout(timer);
  session.timers = [];
  session.writer.end();
  try {
    session.child.kill();
  } catch {
    // Already gone.
  }
  const pending = [...session.pending.values()];
  session.pending.clear();
  session.foreground = 0;
  for (const request of pending) request.reject(error);
  // The pipes may stay open in a descendant of the agent; they must not keep the host process alive.
  session.updateRef();
  for (const stream of [session.child.stdout, session.child.stderr]) refable(stream)?.unref();
}

/** Resolves once the session's agent has exited, sending SIGKILL if it takes longer than a few seconds. */
export function waitForExit(session: AgentSession): Promise<void> {
  const { child } = session;
  // A child process that never got a pid failed to spawn and will never exit.
  const neverStarted = child instanceof ChildProcess && child.pid === undefined;
  if (session.exited || neverStarted || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    // Whoever awaits close() wants to see the exit: keep the event loop alive until it comes.
    child.ref();
    const kill = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, CLOSE_KILL_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
  });
}
