/**
 * Whole-file reads and writes over agent handles, reproducing Node's `fs.promises.readFile`/`writeFile`/`appendFile`
 * step by step: the same read sizes and size limit, the same decoder (`StringDecoder`, byte-order mark kept), the
 * same abort checkpoints, writes in 512 KiB pieces over one open file.
 *
 * Functions here throw (`FileError` or the agent's error); the env maps what they throw with `toFileError`.
 */
import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { FileError } from "../contract/errors.js";
import {
  abortedError,
  fileErrorFromFields,
  isAborted,
  NODE_ABORTED_MESSAGE,
  toFileError,
} from "../contract/file-errors.js";
import { err, ok, type Result } from "../contract/result.js";
import { reopenAgentFile } from "../wire/same-host.js";
import { isWireObject, parseInfo } from "../wire/wire.js";
import { type AgentLink, RemoteHandle } from "./handle.js";
import { chunksBetween, fixedReadsBefore, settle, sizedReadAhead } from "./read-ahead.js";
import { SendWindow } from "./send-window.js";

/** Node's `kReadFileBufferLength`: the read size for regular files. */
export const READ_FILE_CHUNK = 512 * 1024;
/** Node's `kReadFileUnknownBufferLength`: the read size when the size is unknown (FIFOs, devices, empty files). */
export const READ_FILE_UNKNOWN_CHUNK = 64 * 1024;
/** Node's `kIoMaxLength`: the largest file `readFile` accepts. */
export const READ_FILE_MAX = 2 ** 31 - 1;
/** Node's `kWriteFileMaxChunkSize`: the largest single write of `writeFile`/`appendFile`. */
export const WRITE_CHUNK = 512 * 1024;

/** A file opened like `open(path, "r")`, with the size `readFile` plans for (0 = unknown, read to the end). */
interface OpenedFile {
  handle: RemoteHandle;
  size: number;
}

/** The agent's `hello.features` name of the one-request `readFile` op (spec/protocol.md section 12). */
export const READ_FILE_FEATURE = "readFile";

/** What opening for `readFile` gave: an open file to read, or — from the one-request op — the whole content. */
type Opened = { file: OpenedFile } | { content: Buffer };

/**
 * `open(path, "r")` on the agent plus Node's checkpoints around its `fstat`: abort, then the stat result, then the
 * 2 GiB limit. The handle is closed if any of them fails.
 *
 * With `oneRequest` (the agent announced {@link READ_FILE_FEATURE}) the agent is asked with `readFile`, which
 * opens and fstats the same way and, when the file is regular with 1..512 KiB — exactly the files Node reads with
 * one read of the size it planned — also makes that read and closes the file. Node's checkpoints before the fstat,
 * after it and before that read then all lie inside the one request; the read has no side effect, so looking at
 * the signal once the bytes arrived answers as Node does for an abort that landed before its last checkpoint, and
 * an abort that landed after it cannot be told apart from one a moment earlier (spec/semantics.md R16). Any other
 * file comes back as an open handle, exactly as from `open`, and is read as before.
 */
async function openForReadFile(
  link: AgentLink,
  path: string,
  signal: AbortSignal | undefined,
  oneRequest: boolean,
): Promise<Opened> {
  // On the same host the agent also names its descriptor, and this process reads the bytes itself.
  const fdDir = link.sameHostFdDir?.();
  const fd = fdDir === undefined ? {} : { fd: true };
  const reply = oneRequest
    ? await link.request("readFile", { path, max: READ_FILE_CHUNK, ...fd })
    : await link.request("open", { path, noFollow: false, mode: "read", ...fd });
  if (oneRequest && reply.json.handle === undefined) {
    checkpoint(signal, path);
    return { content: asBuffer(reply.payload) };
  }
  const handle = RemoteHandle.fromReply(link, reply);
  try {
    handle.useLocal(await reopenAgentFile(link.sameHostFdDir?.(reply.session), reply, "read"));
    checkpoint(signal, path);
    if (isWireObject(reply.json.statError)) throw fileErrorFromFields(reply.json.statError, path);
    if (!isWireObject(reply.json.stat)) throw new Error("Malformed agent reply: 'open' without 'stat'");
    const stat = parseInfo(reply.json.stat);
    // Node plans by size only for regular files; anything else (and an empty file) is read to its end.
    const size = stat.kind === "file" ? stat.size : 0;
    if (size > READ_FILE_MAX) throw new FileError("unknown", `File size (${size}) is greater than 2 GiB`, path);
    return { file: { handle, size } };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Runs `body` on the opened file and closes it afterwards, whatever happens; content the agent read in the same
 * request goes to `whole` instead.
 */
async function withOpenedFile<T>(
  link: AgentLink,
  path: string,
  signal: AbortSignal | undefined,
  oneRequest: boolean,
  whole: (content: Buffer) => T,
  body: (file: OpenedFile) => Promise<T>,
): Promise<T> {
  const opened = await openForReadFile(link, path, signal, oneRequest);
  if ("content" in opened) return whole(opened.content);
  try {
    return await body(opened.file);
  } finally {
    await opened.file.handle.close();
  }
}

function checkpoint(signal: AbortSignal | undefined, path: string): void {
  if (isAborted(signal)) throw abortedError(path, NODE_ABORTED_MESSAGE);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `readFile(path)`: the file's bytes as a `Buffer`; `oneRequest` as in {@link openForReadFile}. */
export function readFileBytes(
  link: AgentLink,
  path: string,
  signal: AbortSignal | undefined,
  oneRequest = false,
): Promise<Buffer> {
  return withOpenedFile(
    link,
    path,
    signal,
    oneRequest,
    // Read whole by the agent: Node's one read of the planned size, returned as it came.
    (content) => content,
    async ({ handle, size }) => {
      if (size === 0) return readToEndBytes(handle, path, signal);
      checkpoint(signal, path);
      // Up to 512 KiB Node reads the whole planned size at once and stops after that one read, full or not.
      if (size <= READ_FILE_CHUNK) return asBuffer(await handle.pread(0, size));
      return readSizedBytes(handle, size, path, signal);
    },
  );
}

/** Chunked binary read of a regular file: 512 KiB reads up to the size at open, continuing after a short read. */
async function readSizedBytes(
  handle: RemoteHandle,
  size: number,
  path: string,
  signal: AbortSignal | undefined,
): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  // A read still in the plan lands right where the loop would copy it (offset = position in `out`); a read that
  // left the plan gets memory of its own, so it cannot overwrite what a later read put there.
  const ahead = sizedReadAhead(
    (offset, length, planned) =>
      handle.pread(offset, length, (count) =>
        planned() && offset + count <= size ? out.subarray(offset, offset + count) : undefined,
      ),
    READ_FILE_CHUNK,
  );
  let total = 0;
  try {
    for (;;) {
      checkpoint(signal, path);
      const length = Math.min(size - total, READ_FILE_CHUNK);
      const bytes = await ahead.read(total, length, chunksBetween(total + length, size, READ_FILE_CHUNK));
      if (bytes.buffer !== out.buffer || bytes.byteOffset !== out.byteOffset + total) out.set(bytes, total);
      total += bytes.length;
      if (bytes.length === 0 || total === size) return out.subarray(0, total);
    }
  } finally {
    await ahead.settle();
  }
}

/** Sequential 64 KiB reads (one `read()` each, no offset) until one returns nothing. */
async function readToEndBytes(handle: RemoteHandle, path: string, signal: AbortSignal | undefined): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    checkpoint(signal, path);
    const bytes = await handle.pread(undefined, READ_FILE_UNKNOWN_CHUNK);
    if (bytes.length === 0) return Buffer.concat(pieces, total);
    pieces.push(bytes);
    total += bytes.length;
  }
}

/**
 * `readFile(path, "utf8")`: decoded as Node does (one read → `toString`, more → `StringDecoder`; BOM kept);
 * `oneRequest` as in {@link openForReadFile}.
 */
export function readFileText(
  link: AgentLink,
  path: string,
  signal: AbortSignal | undefined,
  oneRequest = false,
): Promise<string> {
  return withOpenedFile(
    link,
    path,
    signal,
    oneRequest,
    // Read whole by the agent: Node's single read, decoded with `toString`.
    (content) => content.toString("utf8"),
    ({ handle, size }) =>
      size === 0 ? readToEndText(handle, path, signal) : readSizedText(handle, size, path, signal),
  );
}

/**
 * Text read of a regular file. Node reads `min(size, 512 KiB)` bytes each time and stops at EOF, at exactly `size`
 * bytes, or at a short read; a file that grew keeps being read in full pieces.
 */
async function readSizedText(
  handle: RemoteHandle,
  size: number,
  path: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  const length = Math.min(size, READ_FILE_CHUNK);
  const ahead = sizedReadAhead((offset, count) => handle.pread(offset, count), length);
  const decoder = new StringDecoder("utf8");
  let text = "";
  let total = 0;
  try {
    for (;;) {
      checkpoint(signal, path);
      const bytes = asBuffer(await ahead.read(total, length, fixedReadsBefore(total + length, size, length)));
      const first = total === 0;
      total += bytes.length;
      if (bytes.length === 0 || total === size || bytes.length !== length) {
        return first ? bytes.toString("utf8") : text + decoder.end(bytes);
      }
      text += decoder.write(bytes);
    }
  } finally {
    await ahead.settle();
  }
}

/** Text read of a file of unknown size: sequential 64 KiB reads through a `StringDecoder`. */
async function readToEndText(handle: RemoteHandle, path: string, signal: AbortSignal | undefined): Promise<string> {
  const decoder = new StringDecoder("utf8");
  let text = "";
  for (;;) {
    checkpoint(signal, path);
    const bytes = await handle.pread(undefined, READ_FILE_UNKNOWN_CHUNK);
    if (bytes.length === 0) return text + decoder.end();
    text += decoder.write(asBuffer(bytes));
  }
}

/** How `writeContent` writes. */
export interface WriteOptions {
  /** Append (`"a"`) instead of truncating (`"w"`). */
  append: boolean;
  /** Create missing parent directories first (Node rules; failures report the parent). */
  parents: boolean;
  /** Checked before every write after the first (writeFile only; appendFile passes none). */
  signal?: AbortSignal;
  /**
   * Sent with the request that opens the file: the agent stops with `aborted` after making the parent and, when
   * not appending, after the open (Node's checkpoint before the first write), so a slow open sees the abort.
   */
  cancel?: AbortSignal;
}

type Settled = Result<unknown, unknown>;

/** Awaits every write in flight, in order, and returns the first failure. */
async function firstFailure(inFlight: readonly Promise<Settled>[]): Promise<Settled | undefined> {
  let failure: Settled | undefined;
  for (const write of inFlight) {
    const outcome = await write;
    if (!outcome.ok && failure === undefined) failure = outcome;
  }
  return failure;
}

/**
 * Writes `content` to `path`: the first 512 KiB go with the `write` request that opens (and creates or truncates)
 * the file; the rest follow as `writeChunk`s on the kept handle, 8 to 32 in flight (`SendWindow`). The agent writes
 * chunks of a handle in order and refuses every chunk after a failed one, so the first failure is the one reported.
 */
export async function writeContent(
  link: AgentLink,
  path: string,
  content: Uint8Array,
  options: WriteOptions,
): Promise<void> {
  const keep = content.length > WRITE_CHUNK;
  // On the same host the agent also names its descriptor, and this process writes the other chunks itself.
  const fd = keep && link.sameHostFdDir?.() !== undefined ? { fd: true } : {};
  const reply = await link.request(
    "write",
    { path, append: options.append, parents: options.parents, keep, ...fd },
    { payload: content.subarray(0, WRITE_CHUNK), signal: options.cancel },
  );
  if (!keep) return;
  const handle = RemoteHandle.fromReply(link, reply);
  try {
    const local = await reopenAgentFile(link.sameHostFdDir?.(reply.session), reply, options.append ? "a" : "w");
    handle.useLocal(local);
    const failure =
      local === undefined
        ? await writeRemainingChunks(handle, path, content, options.signal)
        : await writeRemainingLocally(local, path, content, options.append, options.signal);
    if (failure !== undefined && !failure.ok) throw failure.error;
  } finally {
    await handle.close();
  }
}

/**
 * Writes the chunks after the first through this process's own descriptor of the file (the same-host shortcut),
 * one after the other as Node's `writeFile` does, checking the signal before each: a truncating write puts each
 * chunk at its offset (the agent wrote the first one through its descriptor), an appending one at the end.
 */
async function writeRemainingLocally(
  local: FileHandle,
  path: string,
  content: Uint8Array,
  append: boolean,
  signal: AbortSignal | undefined,
): Promise<Settled> {
  for (let offset = WRITE_CHUNK; offset < content.length; ) {
    if (isAborted(signal)) return err(abortedError(path, NODE_ABORTED_MESSAGE));
    const end = Math.min(offset + WRITE_CHUNK, content.length);
    try {
      const { bytesWritten } = await local.write(content, offset, end - offset, append ? null : offset);
      offset += bytesWritten;
    } catch (thrown) {
      return err(thrown);
    }
  }
  return ok(undefined);
}

/**
 * The window's floor, with or without a signal: 8 pieces (4 MiB). Measured on the WAN rig (50 ms, 100 Mbit/s): a
 * window sized to the estimated bandwidth-delay product from 2 pieces up moved 0.7 MiB/s against 10 MiB/s at 8 —
 * TCP grows its congestion window only while the sender keeps it full, so a small window measures a small rate and
 * stays small. The estimate raises the window above the floor on paths whose product is larger.
 */
export const MIN_PIECES = 8;
/** The window's ceiling: 16 MiB in flight fills a 1 Gbit/s path with 60 ms of round trip twice over. */
export const MAX_PIECES = 32;

/**
 * Sends the chunks after the first, pipelined, as many in flight as the path's bandwidth-delay product needs
 * (`SendWindow`). Node checks the signal before every 512 KiB piece and lets a piece it started finish. Here every
 * chunk carries the signal: when it fires, no further chunk is sent and each chunk still unanswered gets a cancel,
 * which follows it on the wire; the agent writes a chunk only if its cancel has not arrived when its turn comes
 * (spec/protocol.md 7.3). So the file ends at a piece boundary, holding exactly the pieces the agent started before
 * it saw the abort (spec/semantics.md W9): Node's prefix plus at most the window. When every chunk was written the
 * write succeeded, as Node's does once its last piece has started.
 */
async function writeRemainingChunks(
  handle: RemoteHandle,
  path: string,
  content: Uint8Array,
  signal: AbortSignal | undefined,
): Promise<Settled | undefined> {
  const window = new SendWindow(WRITE_CHUNK, MIN_PIECES, MAX_PIECES);
  const inFlight: Promise<Settled>[] = [];
  // One listener on the caller's signal, relaying to a signal per chunk: up to 32 chunks listening on the caller's
  // own signal would trip Node's listener-leak warning in the host's process.
  const cancels = new Set<AbortController>();
  const cancelAll = () => {
    for (const cancel of cancels) cancel.abort();
  };
  signal?.addEventListener("abort", cancelAll, { once: true });
  try {
    for (let offset = WRITE_CHUNK; offset < content.length; offset += WRITE_CHUNK) {
      while (inFlight.length >= window.pieces()) {
        const oldest = await inFlight.shift();
        if (oldest !== undefined && !oldest.ok) return await finish(oldest, inFlight, path, signal, false);
      }
      if (isAborted(signal)) return await finish(undefined, inFlight, path, signal, true);
      const sentAt = performance.now();
      const piece = content.subarray(offset, offset + WRITE_CHUNK);
      const cancel = new AbortController();
      if (signal !== undefined) cancels.add(cancel);
      const request = handle.request("writeChunk", {}, { payload: piece, signal: signal && cancel.signal });
      inFlight.push(
        settle(request).then((outcome) => {
          cancels.delete(cancel);
          if (outcome.ok) window.acked(sentAt);
          return outcome;
        }),
      );
    }
    return await finish(undefined, inFlight, path, signal, false);
  } finally {
    signal?.removeEventListener("abort", cancelAll);
  }
}

/**
 * Awaits the chunks still in flight and gives the write's outcome: the first chunk that failed, in order —
 * a chunk the agent refused because its cancel came first is Node's AbortError (the chunks after it then fail as
 * cancelled or as following a failed chunk, and are not reported) — or, with none failed, `stopped`: an abort seen
 * before a chunk was sent. An abort after the last chunk was sent only shows if it cancelled one of them.
 */
async function finish(
  failed: Settled | undefined,
  inFlight: readonly Promise<Settled>[],
  path: string,
  signal: AbortSignal | undefined,
  stopped: boolean,
): Promise<Settled | undefined> {
  const first = failed ?? (await firstFailure(inFlight));
  if (failed !== undefined) await firstFailure(inFlight);
  if (first !== undefined && !first.ok) {
    const cancelled = isAborted(signal) && toFileError(first.error, path).code === "aborted";
    return cancelled ? err(abortedError(path, NODE_ABORTED_MESSAGE)) : first;
  }
  return stopped ? err(abortedError(path, NODE_ABORTED_MESSAGE)) : undefined;
}
