/** pi's `EditOperations` over an Outpost env. */
import type { EditOperations } from "@mariozechner/pi-coding-agent";
import type { OutpostEnv } from "./env.js";
import { checkReadable, readFileBuffer } from "./read.js";
import { writeTextFile } from "./write.js";

/**
 * `EditOperations` for pi's edit tool. `access` checks that the file exists and can be read on the target (its
 * errno, e.g. `ENOENT`, is what pi shows the model); a file that is readable but not writable fails at the write.
 */
export function createOutpostEditOperations(env: OutpostEnv): EditOperations {
  return {
    readFile: (path) => readFileBuffer(env, path),
    writeFile: (path, content) => writeTextFile(env, path, content),
    access: (path) => checkReadable(env, path),
  };
}
