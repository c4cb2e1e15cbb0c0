/** pi's `WriteOperations` over an Outpost env. */
import type { WriteOperations } from "@mariozechner/pi-coding-agent";
import type { OutpostEnv } from "./env.js";
import { contextOf, toNodeError } from "./errno.js";

/** Writes a UTF-8 string to a file on the target, like `fs.writeFile(path, content, "utf-8")`. */
export async function writeTextFile(env: OutpostEnv, path: string, content: string): Promise<void> {
  const written = await env.writeFile(path, content, contextOf(undefined));
  if (!written.ok) throw toNodeError(written.error);
}

/** `WriteOperations` for pi's write tool: directories and files are made on the env's machine. */
export function createOutpostWriteOperations(env: OutpostEnv): WriteOperations {
  return {
    writeFile: (path, content) => writeTextFile(env, path, content),
    mkdir: async (dir) => {
      const made = await env.createDir(dir, { recursive: true }, contextOf(undefined));
      if (!made.ok) throw toNodeError(made.error);
    },
  };
}
