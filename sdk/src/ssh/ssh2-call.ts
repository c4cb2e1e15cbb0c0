/** Calling ssh2's callback methods (`exec`, `sftp`, `forwardOut`) as promises that fail with an `SshError`. */
import type { SshError } from "./errors.js";

/**
 * Runs `call`, which hands `done` to an ssh2 method, and settles with what the method calls back; a failure is the
 * {@link SshError} `fail` makes of it. ssh2 throws at once, rather than calling back, on a connection that has
 * closed: that throw is a failure like the others.
 */
export function ssh2Call<T>(
  call: (done: (error: Error | undefined, value: T) => void) => void,
  fail: (error: Error) => SshError,
): Promise<T> {
  return new Promise((resolve, reject) => {
    try {
      call((error, value) => (error ? reject(fail(error)) : resolve(value)));
    } catch (error) {
      reject(fail(error as Error));
    }
  });
}
