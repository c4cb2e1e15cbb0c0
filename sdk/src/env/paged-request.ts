/**
 * A request whose results the agent streams as `page` events (`listFiles`, `searchFiles`): the pages are decoded
 * and either collected in order or handed to the caller's `onPage` as they arrive, with the abort checkpoint before
 * each page (spec/semantics.md LF14/LF16, SF13/SF14). A throwing `onPage` or an abort cancels the request.
 */

import { FileError } from "../contract/errors.js";
import { abortedError, isAborted, toFileError } from "../contract/file-errors.js";
import { toError } from "../contract/result.js";
import type { Connection } from "../wire/connection.js";

/** What a paged request produced: the collected items (empty with `onPage`) and the final reply's JSON. */
export interface Paged<T> {
  items: T[];
  json: Record<string, unknown>;
}

/**
 * Sends `op` with `args` and gathers its pages, decoded by `decode`. Throws a `FileError`: the agent's failure mapped
 * with `root` as fallback path, `aborted` at a checkpoint between pages, or `unknown` when `onPage` threw.
 */
export async function requestPages<T>(
  connection: Connection,
  op: string,
  args: Record<string, unknown>,
  root: string,
  decode: (payload: Uint8Array) => T[],
  onPage: ((items: T[]) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<Paged<T>> {
  // One signal for the request: the caller's abort or a throwing onPage cancels the agent's work.
  const cancel = new AbortController();
  const forward = () => cancel.abort();
  signal?.addEventListener("abort", forward, { once: true });
  if (signal?.aborted) cancel.abort();
  const collected: T[] = [];
  let stopped: FileError | undefined;
  try {
    const reply = await connection
      .request(op, args, {
        signal: cancel.signal,
        onEvent: (json, payload) => {
          if (stopped !== undefined || json.kind !== "page") return;
          if (isAborted(signal)) {
            stopped = abortedError(root);
            return;
          }
          const items = decode(payload);
          if (onPage === undefined) {
            for (const item of items) collected.push(item);
            return;
          }
          try {
            onPage(items);
          } catch (thrown) {
            const error = toError(thrown);
            stopped = new FileError("unknown", error.message, root, error);
            cancel.abort();
          }
        },
      })
      .catch((error: unknown) => {
        if (stopped !== undefined) throw stopped;
        throw toFileError(error, root);
      });
    if (stopped !== undefined) throw stopped;
    if (isAborted(signal)) throw abortedError(root);
    return { items: collected, json: reply.json };
  } finally {
    signal?.removeEventListener("abort", forward);
  }
}
