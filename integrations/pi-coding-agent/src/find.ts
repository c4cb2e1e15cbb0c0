/** pi's `FindOperations` over an Outpost env: the glob runs on the target. */
import type { FindOperations } from "@mariozechner/pi-coding-agent";
import type { OutpostEnv } from "./env.js";
import { existsFollowing } from "./ls.js";
import { listTargetFiles } from "./target-files.js";

/**
 * `FindOperations` for pi's find tool: `glob` lists the target's files (its env's `listFiles`, else `fd` there),
 * honouring `.gitignore`, hidden files included, at most `limit` paths.
 */
export function createOutpostFindOperations(env: OutpostEnv): FindOperations {
  return {
    exists: (path) => existsFollowing(env, path),
    glob: (pattern, cwd, { ignore, limit }) =>
      listTargetFiles(env, cwd, { pattern, exclude: ignore, limit }, undefined),
  };
}
