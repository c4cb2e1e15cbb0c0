/**
 * Outpost runs on Node 22 from 22.19 (what Durable hosts run) and on 24; Node 20 reached end of life in April 2026
 * and is refused. The package root and `@outpost/sdk/protocol` import this module first, so an older Node stops
 * at the import with one message saying what to do, instead of failing later in some call. Kept equal to the
 * packages' `engines` (sdk/test/node-version.test.ts checks it).
 */
export const MINIMUM_NODE = { major: 22, minor: 19 } as const;

/** Why `version` (`process.versions.node`, e.g. "20.20.2") is too old for Outpost, or undefined when it is not. */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor >= MINIMUM_NODE.minor)) return undefined;
  return `@outpost/sdk needs Node ${MINIMUM_NODE.major}.${MINIMUM_NODE.minor} or later (22 LTS or 24 LTS); this is Node ${version}`;
}

const problem = unsupportedNode(process.versions.node);
if (problem !== undefined) throw new Error(problem);
