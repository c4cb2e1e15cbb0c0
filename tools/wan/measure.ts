// Small helpers the WAN bench programs share (bench.ts, bulk.ts).

/** The median of `values` (the mean of the two middle values when their count is even). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The value of an ok Result; throws naming `what` otherwise (a bench step that fails ends the bench). */
export function must<T>(result: { ok: true; value: T } | { ok: false; error: unknown }, what: string): T {
  if (!result.ok) throw new Error(`${what}: ${String(result.error)}`);
  return result.value;
}
