/** Calling ssh2's callback methods (`exec`, `sftp`, `forwardOut`) as promises that fail with an `SshError`. */
import type { SshError } from "./errors.js";

/**
 * Runs `call`, which hands `done` to an ssh2 method, and settles with `take` of what the method calls back; a
 * failure is the {@link SshError} `fail` makes of it. ssh2 throws at once, rather than calling back, on a
 * connection that has closed: that throw is a failure like the others.
 *
 * `take` runs inside ssh2's callback, before anything else: ssh2 may handle the packets after the one it calls back
 * for in the same turn (a short command's exit status and close), so a listener attached a microtask later, after
 * the promise settled, would miss their events.
 */
export function ssh2Call<T, R = T>(
  call: (done: (error: Error | undefined, value: T) => void) => void,
  fail: (error: Error) => SshError,
  take: (value: T) => R | PromiseLike<R> = (value) => value as unknown as R,
): Promise<R> {
  return new Promise((resolve, reject) => {
    try {
      call((error, value) => (error ? reject(fail(error)) : resolve(take(value))));
    } catch (error) {
      reject(fail(error as Error));
    }
  });
}
