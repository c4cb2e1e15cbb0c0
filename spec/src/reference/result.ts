/** The reference env's `Result` and the helpers it uses, written from `durable-env.md` §1.1. */

/** Success with a value, or an expected failure with an error; expected failures are returned, not thrown. */
export type Result<TValue, TError> = { ok: false; error: TError } | { ok: true; value: TValue };

/** Wraps a value as a success. */
export const ok = <TValue>(value: TValue): { ok: true; value: TValue } => ({ ok: true, value });

/** Wraps an error as a failure. */
export const err = <TError>(error: TError): { ok: false; error: TError } => ({ ok: false, error });

/**
 * Durable's `toError`: an `Error` stays itself; a string is the message of a new `Error`; any other value is
 * described by `JSON.stringify` (so `undefined` gives an empty message), or by `String` when stringifying throws.
 */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "string") return new Error(thrown);
  let described: string | undefined;
  try {
    described = JSON.stringify(thrown);
  } catch {
    described = String(thrown);
  }
  return new Error(described);
}
