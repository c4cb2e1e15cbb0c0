/** Observations that several property files make the same way. */
import type { ExecutionEnv } from "@outpost/sdk";
import type { Normalizer } from "./normalize.js";

const LIVE = { abortSignal: undefined };

/**
 * The pages a directory reader on `path` returns, `size` entries at a time, normalized, until `done` or a failure
 * (at most `maxPages`); or the failed open.
 */
export async function dirPages(
  env: ExecutionEnv,
  n: Normalizer,
  path: string,
  size: number,
  maxPages: number,
): Promise<unknown> {
  const opened = await env.openDirReader(path, LIVE);
  if (!opened.ok) return n.result(opened);
  const seen: unknown[] = [];
  for (let page = 0; page < maxPages; page++) {
    const next = await opened.value.next(size, LIVE);
    seen.push(n.result(next));
    if (!next.ok || next.value.done) break;
  }
  await opened.value.close(LIVE);
  return seen;
}
