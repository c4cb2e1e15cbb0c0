/**
 * Names that are not UTF-8 (pi-env §6.3 "lists names that are not UTF-8 like Node"; node-quirks "Directories"):
 * random sets of raw names, created through each env's own `exec` (printf octal escapes into a file name), then
 * listed with `listDir` (fails `not_found` naming the first lossy entry in raw byte order) and with directory
 * reader pages (lossy entries skipped; a real `a\uFFFD` next to raw `a\xFF` shows twice), compared between the
 * reference and each Outpost env.
 */
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { expect } from "vitest";
import { propertyTest } from "./harness.js";
import { dirPages } from "./observe.js";
import { propertyFixture, type Target } from "./targets.js";

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

const fixture = propertyFixture();
const { reference, targets } = fixture;

/** Creates the names with the env's own exec: argv form, so the escapes reach printf unparsed. */
function create(env: ExecutionEnv, names: readonly string[]) {
  const script = 'mkdir -p sub && for n in "$@"; do touch "$(printf "$n")"; done';
  return env.exec(["sh", "-c", script, "sh", ...names], undefined, LIVE);
}

async function observe(target: Target, names: readonly string[], pageSize: number): Promise<unknown> {
  const root = fixture.sandbox.root("raw");
  const env = target.at(root);
  const n = fixture.sandbox.normalizer(root);
  try {
    return {
      create: n.result(await create(env, names)),
      listRoot: n.result(await env.listDir(".", LIVE)),
      listSub: n.result(await env.listDir("sub", LIVE)),
      pagesRoot: await dirPages(env, n, ".", pageSize, 20),
      pagesSub: await dirPages(env, n, "sub", pageSize, 20),
      replacementName: n.result(await env.fileInfo("a\uFFFD", LIVE)),
      removeSub: n.result(await env.remove("sub", { recursive: true }, LIVE)),
    };
  } finally {
    fixture.sandbox.drop(root);
  }
}

for (const target of targets) {
  const name = `${target.name} lists names that are not UTF-8 like the reference`;
  propertyTest(
    name,
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS },
    () =>
      fc.asyncProperty(
        fc.shuffledSubarray([...RAW_NAMES], { minLength: 1 }),
        fc.integer({ min: 1, max: 3 }),
        async (names, pageSize) => {
          const expected = await observe(reference, names, pageSize);
          const actual = await observe(target, names, pageSize);
          expect(actual).toEqual(expected);
        },
      ),
    {
      runTimeoutMs: 30_000,
      describe: ([names, pageSize]) => `  names ${JSON.stringify(names)}, pages of ${pageSize}`,
    },
  );
}
