/**
 * Literal anchors: cases for rules that, before them, were guarded only by comparing envs with each other (the
 * property tests, reference vs ours), by a model, or by a tolerance — a bug placed in the reference and in our env
 * alike would have passed. Every expected value here was recorded by running Node (the reference
 * `NodeExecutionEnv` and `node:fs` on Linux) and is written out literally. The list is in spec/semantics.md
 * ("Literal anchors"); a rule gets a case here when a mutation of the reference alone passed the whole suite.
 */
import { assert, at, fails, live, put, script, unhex, value } from "./support.js";
import type { Define, Setup } from "./types.js";
import { watching } from "./watch.js";

/** Registers the literal-anchor cases. */
export function anchorCases(setup: Setup, define: Define): void {
  if (setup.linux && !setup.windows) {
    define("mtimeMs is Node's exact double, for fractional and pre-1970 times", "I5", async (env) => {
      // GNU touch sets nanoseconds from "@<seconds>.<fraction>".
      await script(setup, env, "touch -d @1700000000.123456789 a && touch -d @1.000000001 b && touch -d @-1.5 c");
      const mtimes: Record<string, number> = {};
      for (const name of ["a", "b", "c"]) mtimes[name] = value(await env.fileInfo(name, live), name).mtimeMs;
      // Node: lstatSync(name).mtimeMs = sec * 1e3 + nsec / 1e6 in doubles.
      assert.deepEqual(mtimes, { a: 1700000000123.4568, b: 1000.000001, c: -1500 });
      const listed = value(await env.listDir("", live), "listDir").map((entry) => [entry.name, entry.mtimeMs]);
      assert.deepEqual(listed, [
        ["a", 1700000000123.4568],
        ["b", 1000.000001],
        ["c", -1500],
      ]);
    });
  }

  define("reader arguments must be safe integers: 2^53 is refused like a fraction", "R12 R13 D4", async (env) => {
    await put(env, "f.txt", "a\nb\n");
    value(await env.createDir("d", undefined, live), "createDir");
    const unsafe = Number.MAX_SAFE_INTEGER + 1;
    const binary = value(await env.openBinaryReader("f.txt", undefined, live), "openBinaryReader");
    const dir = value(await env.openDirReader("d", live), "openDirReader");
    try {
      fails(await binary.read(0, unsafe, live), "invalid", "read length 2^53", at(env, "f.txt"));
      fails(await binary.read(unsafe, 1, live), "invalid", "read offset 2^53", at(env, "f.txt"));
      assert.deepEqual(Buffer.from(value(await binary.read(2, 2, live), "read")).toString(), "b\n");
      fails(await binary.scanLines({ startLine: unsafe }, live), "invalid", "startLine 2^53", at(env, "f.txt"));
      fails(
        await binary.scanLines({ startLine: 0, endLine: unsafe }, live),
        "invalid",
        "endLine 2^53",
        at(env, "f.txt"),
      );
      fails(await dir.next(unsafe, live), "invalid", "maxEntries 2^53", at(env, "d"));
    } finally {
      await binary.close(live);
      await dir.close(live);
    }
  });

  define("scanLines of the scan sample, as Node's reference counts it", "R13 R14", async (env) => {
    // EF BB BF 'a' LF, E2 82 LF, LF, EF BB BF 'b' LF, C3 A9 (16 bytes).
    await put(env, "scan.txt", unhex("efbbbf 61 0a e282 0a 0a efbbbf 62 0a c3a9"));
    const reader = value(await env.openBinaryReader("scan.txt", undefined, live), "openBinaryReader");
    try {
      const scan = async (startLine: number, endLine?: number) =>
        value(
          await reader.scanLines(endLine === undefined ? { startLine } : { startLine, endLine }, live),
          `scan ${startLine}`,
        );
      const recorded: [number, number | undefined, object][] = [
        [
          0,
          undefined,
          {
            newlines: 4,
            start: 0,
            end: 16,
            firstLineEnd: 4,
            lastLineStart: 14,
            selectedBytes: 14,
            firstLineBytes: 1,
          },
        ],
        [
          1,
          3,
          { newlines: 4, start: 5, end: 8, firstLineEnd: 7, lastLineStart: 8, selectedBytes: 4, firstLineBytes: 3 },
        ],
        [
          2,
          3,
          { newlines: 4, start: 8, end: 8, firstLineEnd: 8, lastLineStart: 8, selectedBytes: 0, firstLineBytes: 0 },
        ],
        [
          3,
          4,
          { newlines: 4, start: 9, end: 13, firstLineEnd: 13, lastLineStart: 9, selectedBytes: 4, firstLineBytes: 4 },
        ],
        [
          4,
          undefined,
          { newlines: 4, start: 14, end: 16, firstLineEnd: 16, lastLineStart: 14, selectedBytes: 2, firstLineBytes: 2 },
        ],
        [
          9,
          undefined,
          { newlines: 4, start: 16, end: 16, firstLineEnd: 16, lastLineStart: 16, selectedBytes: 0, firstLineBytes: 0 },
        ],
      ];
      for (const [startLine, endLine, expected] of recorded) {
        assert.deepEqual(await scan(startLine, endLine), expected, `startLine ${startLine}, endLine ${endLine}`);
      }
    } finally {
      await reader.close(live);
    }
  });

  if (setup.linux && !setup.windows) {
    define(
      "watch (polling): a rewrite that keeps size and mtime is seen through the content hash",
      "WA4",
      async (env) => {
        // One whole second for both writes: the mtime (nanoseconds 0) and the size stay, only the bytes change.
        const second = (
          await script(setup, env, "s=$(date +%s); printf aaaa > f; touch -d @$s f; printf %s $s")
        ).trim();
        const { watcher, recorder } = await watching(env, [{ path: "f" }], "polling");
        try {
          const from = recorder.mark();
          await script(setup, env, `printf bbbb > f; touch -d @${second} f`);
          await recorder.covered(at(env, "f"), "a rewrite keeping size and mtime", from);
        } finally {
          await watcher.close(live);
        }
      },
      { settings: { watch: { mode: "polling", pollIntervalMs: 50 } } },
    );

    define(
      "watch: the default directory budget is 10,000 directories",
      "WA2 WA5",
      async (env) => {
        // The target and 9,999 directories below it: exactly the budget; one more is over it. Made in a tmpfs
        // when there is one: 10,000 directories on a busy disk take seconds.
        const made = await script(
          setup,
          env,
          'b=$(mktemp -d /dev/shm/outpost-budget-XXXXXX 2>/dev/null || mktemp -d "$PWD/budget-XXXXXX") && ' +
            'mkdir "$b/t" && (cd "$b/t" && seq 1 9999 | xargs mkdir) && printf %s "$b"',
        );
        const tree = `${made}/t`;
        try {
          const opened = await watching(env, [{ path: tree, recursive: true }], "polling");
          await opened.watcher.close(live);
          await script(setup, env, `mkdir '${tree}/10000'`);
          const over = await env.watch([{ path: tree, recursive: true }], () => {}, live);
          assert.equal(
            fails(over, "invalid", "over", { none: true }).message,
            "Watched paths exceed 10000 directories",
          );
        } finally {
          value(await env.remove(made, { recursive: true, force: true }, live), "remove the tree");
        }
      },
      { timeoutMs: 60_000, settings: { watch: { mode: "polling", pollIntervalMs: 60_000 } } },
    );
  }
}
