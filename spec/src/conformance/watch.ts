/**
 * Watching (WA rules): every scenario of Durable's watch conformance, plus budget, excludes, overlapping targets,
 * renamed parents, linked files and close. Each scenario runs in native mode and in polling mode (100 ms).
 *
 * Waiting is event-driven: a case waits for the watcher's `onChange` (at most 3 s per expectation), never a fixed
 * time. A negative expectation ("nothing excluded is reported", "nothing after close") is checked once a later,
 * positive change — one the watcher must report after the forbidden one — has been seen.
 */
import type { ExecutionEnv, FileError, FileWatcher, WatchChange, WatchTarget } from "@outpost/sdk";
import { abortable, aborted, assert, at, fails, live, put, script, styleOf, value } from "./support.js";
import type { Define, Setup, WatchSettings } from "./types.js";

/** Longest wait for one expected change (Durable's cases use the same). */
const expectMs = 3000;
/** Time of one watch case (Durable's). */
const caseMs = 30_000;
/** Poll interval of the polling variants. */
const pollMs = 100;

/** Whether a reported path covers `path`: it is the path or a directory above it (in the path's own style). */
function coversPath(reported: string, path: string): boolean {
  const sep = styleOf(path).sep;
  return reported === path || path.startsWith(reported.endsWith(sep) ? reported : `${reported}${sep}`);
}

/** Whether `change` covers `path`: an overflow, or a reported path at or above it. */
export function covers(change: WatchChange, path: string): boolean {
  return "overflow" in change || ("paths" in change && change.paths.some((reported) => coversPath(reported, path)));
}

/** Whether a path is absolute: rooted on POSIX, a drive letter and a separator on Windows (WIN1). */
function isAbsolute(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path);
}

/** Collects what a watcher delivers and lets a case wait for a change, checking WA12's shape on every delivery. */
export class Recorder {
  /** Every change, in delivery order. */
  readonly changes: WatchChange[] = [];
  /** Shape violations seen (a throw inside `onChange` would be swallowed by the watcher). */
  readonly problems: string[] = [];
  #wake: (() => void)[] = [];

  /** The callback to hand to `watch`. */
  readonly onChange = (change: WatchChange): void => {
    if ("paths" in change) {
      const sorted = [...new Set(change.paths)].sort();
      if (JSON.stringify(sorted) !== JSON.stringify(change.paths)) {
        this.problems.push(`paths not unique and sorted: ${JSON.stringify(change.paths)}`);
      }
      if (change.paths.length === 0) this.problems.push("an empty paths change");
      for (const path of change.paths) if (!isAbsolute(path)) this.problems.push(`relative path ${path}`);
    }
    this.changes.push(change);
    for (const wake of this.#wake.splice(0)) wake();
  };

  /** Position to wait from: changes delivered after this call. */
  mark(): number {
    return this.changes.length;
  }

  /** Waits until a change delivered at or after `from` satisfies `test`; fails after 3 s. */
  async waitFor(test: (change: WatchChange) => boolean, what: string, from: number): Promise<WatchChange> {
    const deadline = Date.now() + expectMs;
    for (;;) {
      this.check();
      const found = this.changes.slice(from).find(test);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        assert.fail(`${what}: not reported within ${expectMs} ms; changes since: ${JSON.stringify(this.since(from))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for a change after `from` that covers `path`. */
  covered(path: string, what: string, from: number): Promise<WatchChange> {
    return this.waitFor((change) => covers(change, path), what, from);
  }

  /** Changes delivered at or after `from`. */
  since(from: number): WatchChange[] {
    return this.changes.slice(from);
  }

  /** Every path reported so far. */
  reportedPaths(): string[] {
    return this.changes.flatMap((change) => ("paths" in change ? change.paths : []));
  }

  /** Fails on any shape violation seen so far. */
  check(): void {
    assert.deepEqual(this.problems, [], "every paths change is unique, sorted, absolute and non-empty");
  }
}

/** The two modes every scenario runs in. */
const modes: { label: string; watch: WatchSettings }[] = [
  { label: "native", watch: { mode: "native" } },
  { label: "polling", watch: { mode: "polling", pollIntervalMs: pollMs } },
];

/** A watcher with its recorder; `stop` closes it. */
export interface Watching {
  watcher: FileWatcher;
  recorder: Recorder;
}

/** Opens a watcher on `targets`, failing the case unless it opens in `mode`. */
export async function watching(
  env: ExecutionEnv,
  targets: WatchTarget[],
  mode: WatchSettings["mode"],
): Promise<Watching> {
  const recorder = new Recorder();
  const watcher = value(await env.watch(targets, recorder.onChange, live), `watch ${JSON.stringify(targets)}`);
  if (mode !== undefined) assert.equal(watcher.mode, mode, "the watcher runs in the forced mode");
  return { watcher, recorder };
}

/**
 * Asserts `recorder` has delivered nothing matching `forbidden` by the time a second watcher on `sentinel` reports a
 * write made after the forbidden activity (so the first watcher had its chance too).
 */
async function nothingMore(
  env: ExecutionEnv,
  mode: WatchSettings["mode"],
  sentinel: string,
  recorder: Recorder,
  forbidden: (change: WatchChange) => boolean,
  what: string,
): Promise<void> {
  const witness = await watching(env, [{ path: sentinel }], mode);
  try {
    const from = witness.recorder.mark();
    await put(env, sentinel, `${Date.now()}-${Math.random()}`);
    await witness.recorder.covered(at(env, sentinel), `${what}: the sentinel write`, from);
    // One more rescan period of the watcher under test, so a change it picked up late would have arrived too.
    const settle = witness.recorder.mark();
    await put(env, sentinel, `${Date.now()}-${Math.random()}-again`);
    await witness.recorder.covered(at(env, sentinel), `${what}: the second sentinel write`, settle);
  } finally {
    await witness.watcher.close(live);
  }
  const bad = recorder.changes.filter(forbidden);
  assert.deepEqual(bad, [], what);
}

/** Registers the watch cases. */
export function watchCases(setup: Setup, define: Define): void {
  for (const { label, watch } of modes) {
    const mode = watch.mode;
    const settings = { watch };
    const scenario = (name: string, rule: string, body: (env: ExecutionEnv) => Promise<void>) =>
      define(`watch (${label}): ${name}`, rule, body, { timeoutMs: caseMs, settings });

    scenario(
      "a missing file target reports creation, modification, replacement, modification and removal",
      "WA1 WA2 WA4 WA7 WA12 E9",
      async (env) => {
        const target = at(env, "AGENTS.md");
        const { watcher, recorder } = await watching(env, [{ path: "AGENTS.md" }], mode);
        try {
          let from = recorder.mark();
          await put(env, "AGENTS.md", "one");
          const created = await recorder.covered(target, "creation", from);
          if ("paths" in created) assert.ok(created.paths.includes(target), "the target is reported as itself");
          from = recorder.mark();
          await put(env, "AGENTS.md", "two");
          await recorder.covered(target, "modification keeping the size", from);
          from = recorder.mark();
          await put(env, "AGENTS.next", "three!");
          value(await env.renameFile("AGENTS.next", "AGENTS.md", live), "rename over");
          await recorder.covered(target, "replacement by rename", from);
          from = recorder.mark();
          await put(env, "AGENTS.md", "four, longer");
          await recorder.covered(target, "modification after the replacement", from);
          from = recorder.mark();
          value(await env.remove("AGENTS.md", undefined, live), "remove");
          await recorder.covered(target, "removal", from);
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      },
    );

    scenario("a missing target under missing ancestors reports its creation", "WA4 WA7 WA8 WA9", async (env) => {
      const target = at(env, "a/b/c/AGENTS.md");
      const { watcher, recorder } = await watching(env, [{ path: "a/b/c/AGENTS.md" }], mode);
      try {
        let from = recorder.mark();
        await put(env, "a/b/c/AGENTS.md", "rules");
        const created = await recorder.covered(target, "creation under new directories", from);
        if ("paths" in created) assert.ok(created.paths.includes(target), "the ancestors are reported as the target");
        assert.ok(
          recorder.reportedPaths().every((path) => path === target),
          `only the target is reported: ${JSON.stringify(recorder.changes)}`,
        );
        from = recorder.mark();
        await put(env, "a/b/c/AGENTS.md", "rules, changed");
        await recorder.covered(target, "modification", from);
      } finally {
        await watcher.close(live);
      }
    });

    scenario(
      "a recursive target reports files in new directories and deeper files later",
      "WA4 WA7 WA8 WA9",
      async (env) => {
        value(await env.createDir("skills", undefined, live), "createDir skills");
        const { watcher, recorder } = await watching(env, [{ path: "skills", recursive: true }], mode);
        try {
          let from = recorder.mark();
          await put(env, "skills/a/b/SKILL.md", "skill");
          await recorder.covered(at(env, "skills/a/b/SKILL.md"), "a file written with its directories", from);
          from = recorder.mark();
          await put(env, "skills/a/b/SKILL.md", "skill, edited");
          const edited = await recorder.covered(at(env, "skills/a/b/SKILL.md"), "an edit in a new directory", from);
          if ("paths" in edited) assert.deepEqual(edited.paths, [at(env, "skills/a/b/SKILL.md")], "only the file");
          from = recorder.mark();
          await put(env, "skills/a/b/c/d/deeper.md", "deeper");
          await recorder.covered(at(env, "skills/a/b/c/d/deeper.md"), "a deeper file later", from);
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      },
    );

    scenario("a renamed-away parent and its recreation are reported", "WA4 WA7 WA8", async (env) => {
      await put(env, "proj/.pi/a.md", "a");
      const target = at(env, "proj/.pi");
      const { watcher, recorder } = await watching(env, [{ path: "proj/.pi", recursive: true }], mode);
      try {
        let from = recorder.mark();
        value(await env.renameFile("proj/.pi", "proj/old", live), "rename away");
        await recorder.covered(target, "the target renamed away", from);
        from = recorder.mark();
        await put(env, "proj/.pi/skills/new.md", "new");
        await recorder.covered(at(env, "proj/.pi/skills/new.md"), "a file in the recreated target", from);
        from = recorder.mark();
        await put(env, "proj/.pi/skills/new.md", "new, edited");
        await recorder.covered(at(env, "proj/.pi/skills/new.md"), "an edit in the recreated target", from);
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    });

    scenario("a parent renamed away and back is followed by identity", "WA4 WA7 WA8", async (env) => {
      await put(env, "proj/sub/file.txt", "one");
      const target = at(env, "proj/sub/file.txt");
      const { watcher, recorder } = await watching(env, [{ path: "proj/sub/file.txt" }], mode);
      try {
        let from = recorder.mark();
        value(await env.renameFile("proj", "moved", live), "rename the parent away");
        const away = await recorder.covered(target, "the parent renamed away", from);
        if ("paths" in away) assert.deepEqual(away.paths, [target], "the changed ancestor is reported as the target");
        from = recorder.mark();
        value(await env.renameFile("moved", "proj", live), "rename it back");
        await recorder.covered(target, "the parent renamed back", from);
        from = recorder.mark();
        await put(env, "proj/sub/file.txt", "two");
        await recorder.covered(target, "a modification after the round trip", from);
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    });

    scenario(
      "excluded names below the target are never reported, a rename out of a hidden name is",
      "WA2 WA4 WA9 WA12",
      async (env) => {
        await put(env, "w/.git/HEAD", "ref");
        await put(env, "w/node_modules/pkg/index.js", "1");
        await put(env, "w/src/main.ts", "main");
        await put(env, "w/.draft.md", "draft");
        const excluded = ["w/.git", "w/node_modules", "w/src/node_modules", "w/src/.env", "w/.cache"];
        const { watcher, recorder } = await watching(
          env,
          [{ path: "w", recursive: true, exclude: { hidden: true, names: ["node_modules"] } }],
          mode,
        );
        try {
          await put(env, "w/.git/HEAD", "ref, moved");
          await put(env, "w/node_modules/pkg/index.js", "2");
          await put(env, "w/src/node_modules/dep/x.js", "x");
          await put(env, "w/src/.env", "SECRET=1");
          value(await env.createDir("w/.cache/deep", undefined, live), "createDir w/.cache/deep");
          let from = recorder.mark();
          await put(env, "w/src/visible.ts", "visible");
          await recorder.covered(at(env, "w/src/visible.ts"), "a visible file after the excluded writes", from);
          from = recorder.mark();
          value(await env.renameFile("w/.draft.md", "w/draft.md", live), "rename out of a hidden name");
          await recorder.covered(at(env, "w/draft.md"), "the entry renamed out of a hidden name", from);
          const leaked = recorder
            .reportedPaths()
            .filter((path) => excluded.some((name) => coversPath(at(env, name), path)));
          assert.deepEqual(leaked, [], "no excluded entry is reported");
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      },
    );

    scenario("exclusions apply below the target only, never to the target itself", "WA2 WA4", async (env) => {
      value(await env.createDir(".pi", undefined, live), "createDir .pi");
      value(await env.createDir("node_modules/pkg", undefined, live), "createDir node_modules/pkg");
      const { watcher, recorder } = await watching(
        env,
        [
          { path: ".pi", exclude: { hidden: true } },
          { path: "node_modules/pkg", exclude: { names: ["node_modules", "pkg"] } },
        ],
        mode,
      );
      try {
        let from = recorder.mark();
        await put(env, ".pi/settings.json", "{}");
        await recorder.covered(at(env, ".pi/settings.json"), "an entry of a hidden target", from);
        from = recorder.mark();
        await put(env, "node_modules/pkg/index.js", "1");
        await recorder.covered(
          at(env, "node_modules/pkg/index.js"),
          "an entry of a target named like an exclusion",
          from,
        );
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    });

    scenario(
      "a non-recursive directory target reports its entries but not deeper changes",
      "WA4 WA7 WA9 WA12",
      async (env) => {
        await put(env, "d/sub/inner.txt", "inner");
        const { watcher, recorder } = await watching(env, [{ path: "d" }], mode);
        try {
          await put(env, "d/sub/inner.txt", "inner, changed");
          await put(env, "d/sub/new.txt", "new");
          const from = recorder.mark();
          await put(env, "d/top.txt", "top");
          await recorder.covered(at(env, "d/top.txt"), "a direct child", from);
          const deep = recorder.reportedPaths().filter((path) => coversPath(at(env, "d/sub"), path));
          assert.deepEqual(deep, [], "nothing below a direct child directory is reported");
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      },
    );

    scenario("overlapping targets still cover subdirectories", "WA4 WA8", async (env) => {
      await put(env, "skills/sub/deep/old.md", "old");
      const { watcher, recorder } = await watching(
        env,
        [{ path: "skills" }, { path: "skills", recursive: true }],
        mode,
      );
      try {
        let from = recorder.mark();
        await put(env, "skills/sub/deep/old.md", "old, edited");
        await recorder.covered(at(env, "skills/sub/deep/old.md"), "an edit in an existing subdirectory", from);
        from = recorder.mark();
        await put(env, "skills/sub/new/x.md", "x");
        await recorder.covered(at(env, "skills/sub/new/x.md"), "a file in a new subdirectory", from);
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    });

    scenario("a directory replaced at the same path is watched anew", "WA7 WA8", async (env) => {
      await put(env, "d/old.txt", "old");
      const target = at(env, "d");
      const { watcher, recorder } = await watching(env, [{ path: "d" }], mode);
      try {
        let from = recorder.mark();
        // Renamed away rather than removed, so the new directory cannot reuse the old inode number.
        value(await env.renameFile("d", "d-old", live), "rename d away");
        value(await env.createDir("d", undefined, live), "createDir d");
        await recorder.covered(target, "the replacement", from);
        from = recorder.mark();
        await put(env, "d/new.txt", "new");
        const created = await recorder.covered(at(env, "d/new.txt"), "a file in the new directory", from);
        if ("paths" in created) assert.ok(created.paths.includes(at(env, "d/new.txt")), "the new file itself");
        recorder.check();
      } finally {
        await watcher.close(live);
      }
    });

    if (setup.symlinks) {
      scenario("a symlinked file target reports changes of the linked file", "WA4 WA6 WA8", async (env) => {
        await put(env, "data/real.txt", "one");
        await script(setup, env, "ln -s data/real.txt link.txt");
        const target = at(env, "link.txt");
        const { watcher, recorder } = await watching(env, [{ path: "link.txt" }], mode);
        try {
          let from = recorder.mark();
          await put(env, "data/real.txt", "two");
          const changed = await recorder.covered(target, "a write to the linked file", from);
          if ("paths" in changed) assert.ok(changed.paths.includes(target), "reported as the target");
          from = recorder.mark();
          await put(env, "data/real.txt", "three, longer");
          await recorder.covered(target, "a second write to the linked file", from);
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      });

      scenario(
        "two watchers of one directory under two names both report, whichever closes first",
        "WA8 WA12",
        async (env) => {
          value(await env.createDir("real", undefined, live), "createDir real");
          await script(setup, env, "ln -s real link");
          const first = await watching(env, [{ path: "real" }], mode);
          const second = await watching(env, [{ path: "link" }], mode);
          try {
            let from = second.recorder.mark();
            const fromFirst = first.recorder.mark();
            await put(env, "real/one.txt", "one");
            await first.recorder.covered(at(env, "real/one.txt"), "the watcher of the real name", fromFirst);
            await second.recorder.covered(at(env, "link/one.txt"), "the watcher of the linked name", from);
            await first.watcher.close(live);
            from = second.recorder.mark();
            await put(env, "real/two.txt", "two");
            await second.recorder.covered(
              at(env, "link/two.txt"),
              "the watcher of the linked name after the other closed",
              from,
            );
            second.recorder.check();
          } finally {
            await first.watcher.close(live);
            await second.watcher.close(live);
          }
        },
      );

      scenario("symbolic links below a recursive target are not followed", "WA4 WA8", async (env) => {
        await put(env, "outside/x.txt", "x");
        value(await env.createDir("t", undefined, live), "createDir t");
        await script(setup, env, "ln -s ../outside t/link");
        const { watcher, recorder } = await watching(env, [{ path: "t", recursive: true }], mode);
        try {
          await put(env, "outside/x.txt", "x, changed");
          await put(env, "outside/y.txt", "y");
          const from = recorder.mark();
          await put(env, "t/visible.txt", "visible");
          await recorder.covered(at(env, "t/visible.txt"), "an entry of the target", from);
          const followed = recorder.reportedPaths().filter((path) => path.startsWith(`${at(env, "t/link")}/`));
          assert.deepEqual(followed, [], "nothing through the link is reported");
          recorder.check();
        } finally {
          await watcher.close(live);
        }
      });
    }

    scenario("reading watched files and listing watched directories is not a change", "WA9 WA12", async (env) => {
      await put(env, "d/f.txt", "content");
      const { watcher, recorder } = await watching(env, [{ path: "d", recursive: true }], mode);
      try {
        value(await env.readTextFile("d/f.txt", live), "readTextFile");
        value(await env.readBinaryFile("d/f.txt", live), "readBinaryFile");
        value(await env.listDir("d", live), "listDir");
        value(await env.fileInfo("d/f.txt", live), "fileInfo");
        await nothingMore(env, mode, "sentinel.txt", recorder, () => true, "reads report nothing");
      } finally {
        await watcher.close(live);
      }
    });

    scenario("close stops delivery, is idempotent and has no checkpoint", "WA13 WA12", async (env) => {
      await put(env, "f.txt", "one");
      const { watcher, recorder } = await watching(env, [{ path: "f.txt" }, { path: "d", recursive: true }], mode);
      const from = recorder.mark();
      await put(env, "f.txt", "two");
      await recorder.covered(at(env, "f.txt"), "a change before close", from);
      await watcher.close(live);
      await watcher.close(aborted());
      const closedAt = recorder.mark();
      await put(env, "f.txt", "three, after close");
      await put(env, "d/new.txt", "after close");
      await nothingMore(
        env,
        mode,
        "sentinel.txt",
        recorder,
        (change) => recorder.changes.indexOf(change) >= closedAt,
        "nothing is delivered after close",
      );
      assert.equal(watcher.mode, mode, "mode after close");
    });

    scenario("an aborted context fails aborted with no path before watching", "WA1 A1 A3", async (env) => {
      const recorder = new Recorder();
      fails(await env.watch([{ path: "x.txt" }], recorder.onChange, aborted()), "aborted", "aborted watch", {
        none: true,
      });
      await nothingMore(env, mode, "x.txt", recorder, () => true, "an aborted watch delivers nothing");
    });

    scenario("whatever onChange throws is swallowed and watching continues", "WA12", async (env) => {
      const recorder = new Recorder();
      let calls = 0;
      const watcher = value(
        await env.watch(
          [{ path: "f.txt" }],
          (change) => {
            calls++;
            recorder.onChange(change);
            throw new Error("callback failed");
          },
          live,
        ),
        "watch",
      );
      try {
        let from = recorder.mark();
        await put(env, "f.txt", "one");
        await recorder.covered(at(env, "f.txt"), "the first change", from);
        from = recorder.mark();
        await put(env, "f.txt", "two, longer");
        await recorder.covered(at(env, "f.txt"), "a change after a throwing callback", from);
        assert.ok(calls >= 2, "called again");
      } finally {
        await watcher.close(live);
      }
    });

    scenario("targets resolve against the cwd at watch time and are reported absolute", "WA2 WA12 P1", async (env) => {
      const first = env.cwd;
      value(await env.createDir("other", undefined, live), "createDir other");
      const { watcher, recorder } = await watching(env, [{ path: "./rel/../f.txt" }], mode);
      try {
        env.cwd = styleOf(first).join(first, "other");
        const from = recorder.mark();
        value(await env.writeFile(styleOf(first).join(first, "f.txt"), "x", live), "write in the first cwd");
        const change = await recorder.covered(styleOf(first).join(first, "f.txt"), "the target in the first cwd", from);
        if ("paths" in change)
          assert.deepEqual(change.paths, [styleOf(first).join(first, "f.txt")], "absolute and normalized");
      } finally {
        env.cwd = first;
        await watcher.close(live);
      }
    });
  }

  budgetCases(define);
  if (setup.linux) defaultModeCase(setup, define);
}

/** WA3's `statfs` magic numbers of file systems that are polled, as `stat -f -c %t` prints them. */
const polledFileSystems = new Set([
  "6969",
  "517b",
  "ff534d42",
  "fe534d42",
  "65735546",
  "1021997",
  "bd00bd0",
  "47504653",
  "c36400",
  "5346414f",
  "6b414653",
  "5dca2df5",
]);

/** WA3 without a forced mode: native on a local disk, polling on network and FUSE file systems (Linux). */
function defaultModeCase(setup: Setup, define: Define): void {
  define("watch: without a forced mode the file system of the target decides the mode", "WA3", async (env) => {
    const type = (await script(setup, env, "stat -f -c %t .")).trim();
    const expected = polledFileSystems.has(type) ? "polling" : "native";
    const { watcher, recorder } = await watching(env, [{ path: "missing/f.txt" }], expected);
    try {
      const from = recorder.mark();
      await put(env, "missing/f.txt", "x");
      await recorder.covered(at(env, "missing/f.txt"), "a change in the default mode", from);
    } finally {
      await watcher.close(live);
    }
  });
}

/** WA5 needs envs with a small budget, so these cases set their own watch options. */
function budgetCases(define: Define): void {
  for (const { label, watch } of modes) {
    const mode = watch.mode;
    define(
      `watch (${label}): a tree over the directory budget fails at open, and growing past it later stops the watcher`,
      "WA5 WA11 WA1",
      async (env) => {
        await put(env, "tree/a/b/f.txt", "f");
        value(await env.createDir("tree/c", undefined, live), "createDir tree/c");
        const refused = fails(
          await env.watch([{ path: "tree", recursive: true }], () => {}, live),
          "invalid",
          "over the budget at open",
          { none: true },
        );
        assert.equal(refused.message, "Watched paths exceed 3 directories", "message");
        value(await env.remove("tree/c", { recursive: true }, live), "remove tree/c");
        const { watcher, recorder } = await watching(env, [{ path: "tree", recursive: true }], mode);
        try {
          const from = recorder.mark();
          value(await env.createDir("tree/d", undefined, live), "createDir tree/d");
          const stopped = await recorder.waitFor((change) => "error" in change, "the budget error", from);
          const error = (stopped as { error: FileError }).error;
          assert.equal(error.code, "invalid", "code");
          assert.equal(error.message, "Watched paths exceed 3 directories", "message");
          assert.equal(error.name, "FileError", "name");
          const errorAt = recorder.changes.indexOf(stopped);
          await put(env, "tree/a/after.txt", "after");
          await nothingMore(
            env,
            mode,
            "sentinel.txt",
            recorder,
            (change) => recorder.changes.indexOf(change) > errorAt,
            "the error is the last change",
          );
        } finally {
          await watcher.close(live);
        }
      },
      { timeoutMs: caseMs, settings: { watch: { ...watch, maxDirectories: 3 } } },
    );

    define(
      `watch (${label}): an open that fails reports its failure even when the context was aborted meanwhile`,
      "WA1 WA5",
      async (env) => {
        await put(env, "tree/a/b/f.txt", "f");
        value(await env.createDir("tree/c", undefined, live), "createDir tree/c");
        const { context, controller } = abortable();
        const opening = env.watch([{ path: "tree", recursive: true }], () => {}, context);
        // The entry checkpoint has passed; the abort lands while the watcher is being opened.
        controller.abort();
        const refused = fails(await opening, "invalid", "over the budget, aborted during the open", { none: true });
        assert.equal(refused.message, "Watched paths exceed 3 directories", "message");
      },
      { timeoutMs: caseMs, settings: { watch: { ...watch, maxDirectories: 3 } } },
    );

    define(
      `watch (${label}): a budget of 0 refuses every directory target but not files or missing targets`,
      "WA5 WA1",
      async (env) => {
        value(await env.createDir("dir", undefined, live), "createDir dir");
        await put(env, "f.txt", "f");
        fails(await env.watch([{ path: "dir" }], () => {}, live), "invalid", "a directory target", { none: true });
        const { watcher, recorder } = await watching(env, [{ path: "f.txt" }, { path: "missing/x" }], mode);
        try {
          const from = recorder.mark();
          await put(env, "f.txt", "changed");
          await recorder.covered(at(env, "f.txt"), "the file target", from);
        } finally {
          await watcher.close(live);
        }
      },
      { timeoutMs: caseMs, settings: { watch: { ...watch, maxDirectories: 0 } } },
    );
  }
}
