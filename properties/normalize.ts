/**
 * Turns what an env returned into a plain value that two envs in different roots can compare with `toEqual`.
 *
 * Only what legitimately differs between two envs is masked: the root and temp directory spellings, the random
 * parts of temp names, and modification times. Everything else stays observable, including whether bytes came
 * back as a `Buffer` or a plain `Uint8Array` (that is contract), keys present with an `undefined` value, and the
 * path an error reports.
 */
import { createHash } from "node:crypto";

/** Strings longer than this are compared by digest, so a failure report stays readable. */
const LONG_TEXT = 2048;
/** Byte arrays longer than this are compared by digest. */
const LONG_BYTES = 1024;

/** Where an env's files live: every spelling of its root and of the temp directory it creates into. */
export interface Spellings {
  roots: readonly string[];
  tmpdirs: readonly string[];
}

/** The random six characters `mkdtemp` appends, after `<tmp>` and an optional prefix component. */
const MKDTEMP_SUFFIX = /(<tmp>(?:\/(?:sub\/)?[^/"]*?)?)[A-Za-z0-9]{6}(?![A-Za-z0-9])/g;
/** A lowercase RFC 4122 version 4 UUID, as `createTempFile` and the spill file use. */
const UUID_V4 = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;

/** Marks a property present with the value `undefined` (absent and `undefined` are different contracts). */
export const UNDEFINED = "<undefined>";

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Removes the `message` fields a reporting normalizer adds, so that two reports compare like two results. */
export function withoutMessages(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMessages);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "message")
      .map(([key, item]) => [key, withoutMessages(item)]),
  );
}

/** Normalizes values of one env. */
export class Normalizer {
  readonly #replacements: [string, string][];

  readonly #messages: boolean;

  /** With `messages`, errors keep their message too: for failure reports only, never for comparing. */
  constructor(spellings: Spellings, options: { messages?: boolean } = {}) {
    this.#messages = options.messages === true;
    const pairs: [string, string][] = [
      ...spellings.roots.map((spelling): [string, string] => [spelling, "<root>"]),
      ...spellings.tmpdirs.map((spelling): [string, string] => [spelling, "<tmp>"]),
    ];
    // Longest first, so that a spelling containing another one is replaced whole.
    this.#replacements = pairs.filter(([from]) => from.length > 0).sort((a, b) => b[0].length - a[0].length);
  }

  /** Replaces roots and temp directories, masks temp names; long results become a digest. */
  text(value: string): unknown {
    let text = value;
    for (const [from, to] of this.#replacements) text = text.split(from).join(to);
    if (text.includes("<tmp>")) text = text.replace(UUID_V4, "<uuid>").replace(MKDTEMP_SUFFIX, "$1XXXXXX");
    if (text.length <= LONG_TEXT) return text;
    return { text: { length: text.length, sha256: sha256(text), head: text.slice(0, 40), tail: text.slice(-40) } };
  }

  /** Raw output bytes (a spill file) with the root and temp directory spellings replaced, byte for byte. */
  outputBytes(value: Uint8Array): Uint8Array {
    let bytes = Buffer.from(value);
    for (const [from, to] of this.#replacements) {
      const needle = Buffer.from(from);
      const parts: Buffer[] = [];
      let start = 0;
      for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, start)) {
        parts.push(bytes.subarray(start, at), Buffer.from(to));
        start = at + needle.length;
      }
      if (start > 0) bytes = Buffer.concat([...parts, bytes.subarray(start)]);
    }
    return new Uint8Array(bytes);
  }

  /** Bytes as hex (or a digest when long), tagged with their class. */
  bytes(value: Uint8Array): unknown {
    const type = Buffer.isBuffer(value) ? "Buffer" : value.constructor.name;
    if (value.byteLength <= LONG_BYTES) return { type, bytes: hex(value) };
    return {
      type,
      bytes: {
        length: value.byteLength,
        sha256: sha256(value),
        head: hex(value.subarray(0, 32)),
        tail: hex(value.subarray(value.byteLength - 32)),
      },
    };
  }

  /** Any value: arrays and plain objects recursively, errors by name, code and path. */
  value(value: unknown): unknown {
    if (value === undefined) return UNDEFINED;
    if (typeof value === "string") return this.text(value);
    if (value instanceof Uint8Array) return this.bytes(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (value instanceof Error) return this.error(value);
    if (typeof value === "number" && !Number.isFinite(value)) return String(value);
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // Modification times differ between two roots; only their type is compared.
      out[key] = key === "mtimeMs" && typeof item === "number" && Number.isFinite(item) ? "<mtime>" : this.value(item);
    }
    // The name of a temp entry holds the same random part as its path: mask it the same way.
    if (typeof out.name === "string" && typeof out.path === "string" && out.path.includes("<tmp>")) {
      out.name = this.tempName(out.name);
    }
    return out;
  }

  /** Masks the random part of a name created in the temp directory (as if it were `<tmp>/<name>`). */
  tempName(name: string): string {
    const masked = `<tmp>/${name}`.replace(UUID_V4, "<uuid>").replace(MKDTEMP_SUFFIX, "$1XXXXXX");
    return masked.slice("<tmp>/".length);
  }

  /**
   * A failure: its class name, code, reported path and spill file. The message is left out: only codes and
   * values are contract (messages should imitate Node, but may differ).
   */
  error(error: Error): unknown {
    const fields = error as Error & { code?: unknown; path?: unknown; spillPath?: unknown };
    const out: Record<string, unknown> = { name: error.name, code: fields.code };
    if ("path" in error) out.path = this.value(fields.path);
    if ("spillPath" in error) out.spillPath = this.value(fields.spillPath);
    if (this.#messages) out.message = this.text(error.message);
    return out;
  }

  /** A `Result`: `{ok: true, value}` or `{ok: false, ...error}`. */
  result(result: { ok: boolean; value?: unknown; error?: unknown }): unknown {
    if (result.ok) return { ok: true, value: this.value(result.value) };
    const error = result.error;
    if (error instanceof Error) return { ok: false, ...(this.error(error) as object) };
    return { ok: false, thrown: this.value(error) };
  }
}
