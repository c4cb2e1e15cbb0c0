// The bulk rows' transport floor: the same bytes moved through a child process's pipe by `cat`, with no framing,
// no agent and no file handles of ours. Node reads a child's stdout in 64 KiB pieces and writes its stdin through
// a stream, so this — not in-process `fs` — is the least any agent behind a pipe can cost. Each call spawns its
// `cat` (a few milliseconds of the total), as the bytes must come from or go to the file every time.
import { spawn } from "node:child_process";
import { once } from "node:events";

/** Size of the pieces written to the child's stdin: the SDK's own write size (Node's writeFile chunk). */
const PIECE = 512 * 1024;

/** Reads `path` through `cat` into one buffer of `size` bytes, as `readBinaryFile` fills its result. */
export async function catRead(path: string, size: number): Promise<Buffer> {
  const child = spawn("cat", ["--", path], { stdio: ["ignore", "pipe", "inherit"] });
  const out = Buffer.allocUnsafe(size);
  let filled = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    filled += chunk.copy(out, filled);
  });
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0 || filled !== size) throw new Error(`cat ${path}: exit ${code}, ${filled} of ${size} bytes`);
  return out;
}

/** Writes `data` to `path` through `cat` (`>` or, with `append`, `>>`), waiting for the child to finish. */
export async function catWrite(path: string, data: Uint8Array, append: boolean): Promise<void> {
  const redirect = append ? ">>" : ">";
  const child = spawn("sh", ["-c", `exec cat ${redirect} "$1"`, "sh", path], { stdio: ["pipe", "ignore", "inherit"] });
  const closed = once(child, "close") as Promise<[number | null]>;
  for (let offset = 0; offset < data.length; offset += PIECE) {
    if (!child.stdin.write(data.subarray(offset, offset + PIECE))) await once(child.stdin, "drain");
  }
  child.stdin.end();
  const [code] = await closed;
  if (code !== 0) throw new Error(`cat ${redirect} ${path}: exit ${code}`);
}
