/** A value or an expected failure. Durable's `Result`: expected failures are returned, never thrown. */
export type Result<TValue, TError> = { ok: true; value: TValue } | { ok: false; error: TError };

/** Builds a successful result. */
export function ok<TValue>(value: TValue): { ok: true; value: TValue } {
  return { ok: true, value };
}

/** Builds a failed result. */
export function err<TError>(error: TError): { ok: false; error: TError } {
  return { ok: false, error };
}

/** Returns the value, or throws the error of a failed result. */
export function getOrThrow<TValue, TError>(result: Result<TValue, TError>): TValue {
  if (result.ok) return result.value;
  throw result.error;
}

/** Returns the value, or `undefined` for a failed result. */
export function getOrUndefined<TValue extends object, TError>(result: Result<TValue, TError>): TValue | undefined {
  return result.ok ? result.value : undefined;
}

/**
 * Turns anything thrown into an `Error` the way Durable does: an `Error` as is, a string as its message,
 * anything else as its JSON text (or `String(x)` when it cannot be stringified).
 */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "string") return new Error(thrown);
  try {
    // JSON.stringify(undefined) is undefined: Durable then builds an Error with an empty message.
    return new Error(JSON.stringify(thrown));
  } catch {
    return new Error(String(thrown));
  }
}
