/** pi's `ReadOperations` over an Outpost env. */
import type { ReadOperations } from "@mariozechner/pi-coding-agent";
import { fileTypeFromBuffer } from "file-type";
import type { OutpostEnv } from "./env.js";
import { contextOf, toNodeError } from "./errno.js";

/** The image types pi's read tool sends to a model as attachments (pi's own list). */
const IMAGE_MIME_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
/** How many leading bytes the file-type sniffers need (the library's own sample size). */
const SNIFF_BYTES = 4100;

/** Whether `open(path, "r")` succeeds where the binary reader refuses: a directory or a non-regular file. */
function opensAsNonRegular(code: string): boolean {
  return code === "is_directory" || code === "invalid";
}

/** The bytes of a file on the target, as pi's `readFile` returns them. */
export async function readFileBuffer(env: OutpostEnv, path: string): Promise<Buffer> {
  const bytes = await env.readBinaryFile(path, contextOf(undefined));
  if (!bytes.ok) throw toNodeError(bytes.error);
  return Buffer.from(bytes.value.buffer, bytes.value.byteOffset, bytes.value.byteLength);
}

/**
 * Checks that a file is readable the way `access(path, R_OK)` does, by opening it on the target. A directory or a
 * FIFO passes, as with `access`; the read that follows then fails (or waits) as it does locally.
 */
export async function checkReadable(env: OutpostEnv, path: string): Promise<void> {
  const context = contextOf(undefined);
  const opened = await env.openBinaryReader(path, undefined, context);
  if (opened.ok) {
    await opened.value.close(context);
    return;
  }
  if (opensAsNonRegular(opened.error.code)) return;
  throw toNodeError(opened.error, { syscall: "access", path });
}

/**
 * The image type of a file from its leading bytes, read through the binary reader (never blocking on a FIFO);
 * `null` for anything but the four image types pi attaches, and for files that are not regular.
 */
export async function detectImageMimeType(env: OutpostEnv, path: string): Promise<string | null> {
  const context = contextOf(undefined);
  const opened = await env.openBinaryReader(path, undefined, context);
  if (!opened.ok) {
    if (opened.error.code === "invalid") return null;
    // A directory fails like Node's first read of it: "EISDIR: illegal operation on a directory, read".
    throw toNodeError(opened.error);
  }
  const reader = opened.value;
  try {
    const head = await reader.read(0, SNIFF_BYTES, context);
    if (!head.ok) throw toNodeError(head.error);
    if (head.value.byteLength === 0) return null;
    const type = await fileTypeFromBuffer(head.value);
    return type !== undefined && IMAGE_MIME_TYPES.has(type.mime) ? type.mime : null;
  } finally {
    await reader.close(context);
  }
}

/** `ReadOperations` for pi's read tool: every byte comes from the env's machine. */
export function createOutpostReadOperations(env: OutpostEnv): ReadOperations {
  return {
    readFile: (path) => readFileBuffer(env, path),
    access: (path) => checkReadable(env, path),
    detectImageMimeType: (path) => detectImageMimeType(env, path),
  };
}
