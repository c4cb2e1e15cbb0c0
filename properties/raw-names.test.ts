/**
 * Names that are not UTF-8 (pi-env §6.3 "lists names that are not UTF-8 like Node"; node-quirks "Directories"):
 * random sets of raw names, created through each env's own `exec` (printf octal escapes into a file name), then
 * listed with `listDir` (fails `not_found` naming the first lossy entry in raw byte order) and with directory
 * reader pages (lossy entries skipped; a real `a\uFFFD` next to raw `a\xFF` shows twice), compared between the
 * reference and each Outpost env.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkProperty, numRuns, testTimeout } from "./harness.js";
import type { Normalizer } from "./normalize.js";
import { createSandbox, outpostTargets, referenceTarget, type Sandbox, type Target } from "./targets.js";

const BASE_RUNS = 12;
const BASE_TIME_MS = 10_000;

/** Names as `printf` formats (octal escapes for the bytes that matter); `sub/` entries go into a subdirectory. */
const RAW_NAMES = [
  "b",
  "a\\377",
  "\\303\\251",
  "a\\376 z",
  "z",
  "a\\357\\277\\275",
  "\\377",
  "sub/\\376x",
  "sub/ok",
] as const;

const LIVE = { abortSignal: undefined };

let sandbox: Sandbox;
const reference = referenceTarget();
const targets = outpostTargets();

beforeAll(() => {
  sandbox = createSandbox();
});

afterAll(async () => {
  for (const target of targets) await target.close();
  sandbox?.dispose();
});

/** Creates the names with the env's own exec: argv form, so the escapes reach printf unparsed. */
function create(env: ExecutionEnv, names: readonly string[]) {
  const script = 'mkdir -p sub && for n in "$@"; do touch "$(printf "$n")"; done';
  return env.exec(["sh", "-c", script, "sh", ...names], undefined, LIVE);
}

async function pages(env: ExecutionEnv, n: Normalizer, path: string, size: number): Promise<unknown> {
  const opened = await env.openDirReader(path, LIVE);
  if (!opened.ok) return n.result(opened);
  const seen: unknown[] = [];
  for (let page = 0; page < 20; page++) {
    const next = await opened.value.next(size, LIVE);
    seen.push(n.result(next));
    if (!next.ok || next.value.done) break;
  }
  await opened.value.close(LIVE);
  return seen;
}

async function observe(target: Target, names: readonly string[], pageSize: number): Promise<unknown> {
  const root = sandbox.root("raw");
  const env = target.at(root);
  const n = sandbox.normalizer(root);
  try {
    return {
      create: n.result(await create(env, names)),
      listRoot: n.result(await env.listDir(".", LIVE)),
      listSub: n.result(await env.listDir("sub", LIVE)),
      pagesRoot: await pages(env, n, ".", pageSize),
      pagesSub: await pages(env, n, "sub", pageSize),
      replacementName: n.result(await env.fileInfo("a\uFFFD", LIVE)),
      removeSub: n.result(await env.remove("sub", { recursive: true }, LIVE)),
    };
  } finally {
    sandbox.drop(root);
  }
}

for (const target of targets) {
  const name = `${target.name} lists names that are not UTF-8 like the reference`;
  it(
    name,
    async () => {
      const property = fc.asyncProperty(
        fc.shuffledSubarray([...RAW_NAMES], { minLength: 1 }),
        fc.integer({ min: 1, max: 3 }),
        async (names, pageSize) => {
          const expected = await observe(reference, names, pageSize);
          const actual = await observe(target, names, pageSize);
          expect(actual).toEqual(expected);
        },
      );
      await checkProperty(property, {
        name,
        numRuns: numRuns(BASE_RUNS),
        timeLimitMs: testTimeout(BASE_TIME_MS, 0),
        runTimeoutMs: 30_000,
        describe: ([names, pageSize]) => `  names ${JSON.stringify(names)}, pages of ${pageSize}`,
      });
    },
    testTimeout(BASE_TIME_MS),
  );
}
