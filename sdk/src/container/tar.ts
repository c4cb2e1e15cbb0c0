/**
 * The one-file tar archives `podman cp` / `docker cp` read from stdin and write to stdout: how the agent goes into a
 * container that has no shell, and how its bytes come back out to be hashed here.
 */

const BLOCK = 512;

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value, offset, length, "utf8");
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, "0")}\0`;
}

/** A ustar archive of one regular file at `path` (relative, at most 100 bytes), owned by root, with `mode`. */
export function tarOfFile(path: string, bytes: Uint8Array, mode: number): Buffer {
  if (Buffer.byteLength(path) > 100) throw new Error(`tar path too long: ${path}`);
  const header = Buffer.alloc(BLOCK);
  field(header, 0, 100, path);
  field(header, 100, 8, octal(mode, 8));
  field(header, 108, 8, octal(0, 8));
  field(header, 116, 8, octal(0, 8));
  field(header, 124, 12, octal(bytes.length, 12));
  field(header, 136, 12, octal(Math.floor(Date.now() / 1000), 12));
  field(header, 156, 1, "0");
  field(header, 257, 6, "ustar\0");
  field(header, 263, 2, "00");
  // The checksum is computed with its own field as eight spaces.
  field(header, 148, 8, "        ");
  let sum = 0;
  for (const byte of header) sum += byte;
  field(header, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  const padding = (BLOCK - (bytes.length % BLOCK)) % BLOCK;
  return Buffer.concat([header, bytes, Buffer.alloc(padding), Buffer.alloc(2 * BLOCK)]);
}

/** The bytes of the first regular file in `archive`; undefined if it has none. Extended headers are skipped. */
export function firstFileOf(archive: Buffer): Buffer | undefined {
  let offset = 0;
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return undefined;
    const size = Number.parseInt(header.toString("latin1", 124, 136).replace(/\0.*$/s, "").trim() || "0", 8);
    const type = header.toString("latin1", 156, 157);
    const start = offset + BLOCK;
    if (type === "0" || type === "\0") {
      return start + size <= archive.length ? archive.subarray(start, start + size) : undefined;
    }
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
