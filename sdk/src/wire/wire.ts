/**
 * Reading the JSON of agent replies (protocol 1 field names) into typed values, and building `FileInfo`s from the
 * agent's `info` objects. A reply that lacks a field it must have is a protocol fault, reported as an `Error`
 * (which file operations map to `unknown`).
 */
import type { FileInfo, FileKind, LineScan } from "../contract/types.js";

/** The agent's description of one path: `{name, kind, size, mtimeSec, mtimeNsec, dev, ino}`. */
export interface WireInfo {
  kind: FileKind | "other";
  size: number;
  mtimeSec: number;
  mtimeNsec: number;
}

/** One `readdir` entry: its (lossily decoded) name, its raw bytes when they differ, and its info or its error. */
export interface WireEntry {
  name: string;
  raw: Uint8Array | undefined;
  info: WireInfo | undefined;
  error: Record<string, unknown> | undefined;
}

/** A JSON object as the agent sends it. */
export type WireObject = Record<string, unknown>;

/** True for a JSON object (not an array, not null). */
export function isWireObject(value: unknown): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A required number field. */
export function numberField(json: WireObject, key: string): number {
  const value = json[key];
  if (typeof value !== "number") throw new Error(`Malformed agent reply: '${key}' is not a number`);
  return value;
}

/** A required string field. */
export function stringField(json: WireObject, key: string): string {
  const value = json[key];
  if (typeof value !== "string") throw new Error(`Malformed agent reply: '${key}' is not a string`);
  return value;
}

/** A required object field. */
export function objectField(json: WireObject, key: string): WireObject {
  const value = json[key];
  if (!isWireObject(value)) throw new Error(`Malformed agent reply: '${key}' is not an object`);
  return value;
}

const KINDS: ReadonlySet<string> = new Set(["file", "directory", "symlink", "other"]);

/** Parses an `info` object. */
export function parseInfo(json: WireObject): WireInfo {
  const kind = stringField(json, "kind");
  if (!KINDS.has(kind)) throw new Error(`Malformed agent reply: unknown kind '${kind}'`);
  return {
    kind: kind as WireInfo["kind"],
    size: numberField(json, "size"),
    mtimeSec: numberField(json, "mtimeSec"),
    mtimeNsec: numberField(json, "mtimeNsec"),
  };
}

/** The info of an `lstat`/`fstat` reply, which is either the info object itself or wraps it as `info`. */
export function infoOfReply(json: WireObject): WireInfo {
  return parseInfo(isWireObject(json.info) ? json.info : json);
}

/** Node's `mtimeMs`: seconds and nanoseconds combined as a double, fractional milliseconds included. */
export function mtimeMs(info: WireInfo): number {
  return info.mtimeSec * 1000 + info.mtimeNsec / 1e6;
}

/** A `FileInfo` for a representable kind; `name` and `path` are what the env reports (not the agent's name). */
export function fileInfo(info: WireInfo & { kind: FileKind }, name: string, path: string): FileInfo {
  return { name, path, kind: info.kind, size: info.size, mtimeMs: mtimeMs(info) };
}

/** True when the kind can be represented in a `FileInfo` (FIFOs, sockets and devices cannot). */
export function isRepresentable(info: WireInfo): info is WireInfo & { kind: FileKind } {
  return info.kind !== "other";
}

/** Parses the `entries` of a `readdir` reply. */
export function parseEntries(json: WireObject): WireEntry[] {
  const entries = json.entries;
  if (!Array.isArray(entries)) throw new Error("Malformed agent reply: 'entries' is not an array");
  return entries.map((entry: unknown) => {
    if (!isWireObject(entry)) throw new Error("Malformed agent reply: a directory entry is not an object");
    return {
      name: stringField(entry, "name"),
      raw: parseRaw(entry.raw),
      info: isWireObject(entry.info) ? parseInfo(entry.info) : undefined,
      error: isWireObject(entry.error) ? entry.error : undefined,
    };
  });
}

function parseRaw(raw: unknown): Uint8Array | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw) || !raw.every((byte) => Number.isInteger(byte) && byte >= 0 && byte <= 255)) {
    throw new Error("Malformed agent reply: 'raw' is not an array of bytes");
  }
  return Uint8Array.from(raw as number[]);
}

/** The bytes a directory entry's name has on disk: `raw` when the agent sent it, else the UTF-8 of `name`. */
export function nameBytes(entry: Pick<WireEntry, "name" | "raw">): Uint8Array {
  return entry.raw ?? Buffer.from(entry.name, "utf8");
}

const SCAN_FIELDS = [
  "newlines",
  "start",
  "end",
  "firstLineEnd",
  "lastLineStart",
  "selectedBytes",
  "firstLineBytes",
] as const satisfies readonly (keyof LineScan)[];

/** Parses a `scanLines` reply. */
export function parseLineScan(json: WireObject): LineScan {
  const scan = isWireObject(json.scan) ? json.scan : json;
  const result = {} as LineScan;
  for (const key of SCAN_FIELDS) result[key] = numberField(scan, key);
  return result;
}
