/**
 * Permission failures (E2's `EACCES` → `permission_denied`, WA1/WA4/WA11 for watchers), with the code, path and
 * message Node reports. They need a target user that file permissions apply to: every case here is marked
 * `permissions`, so it is skipped on a root target and runs on an unprivileged one (`make test-unprivileged`).
 * The expected values were recorded by running the reference as an unprivileged user.
 */
import type { ExecutionEnv, FileError, Result } from "@outpost/sdk";
import { assert, at, fails, live, put, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";
import { watching } from "./watch.js";

type Call = (env: ExecutionEnv, path: string) => Promise<Result<unknown, FileError>>;

/** Every method that opens a file, and the file it opens. */
const opens: Record<string, Call> = {
  readTextFile: (env, path) => env.readTextFile(path, live),
  readBinaryFile: (env, path) => env.readBinaryFile(path, live),
  openTextLineReader: (env, path) => env.openTextLineReader(path, live),
  readTextLines: (env, path) => env.readTextLines(path, undefined, live),
  openBinaryReader: (env, path) => env.openBinaryReader(path, undefined, live),
  writeFile: (env, path) => env.writeFile(path, "z", live),
  appendFile: (env, path) => env.appendFile(path, "z", live),
  truncateFile: (env, path) => env.truncateFile(path, 0, live),
  flushFile: (env, path) => env.flushFile(path, live),
};

/** Node's message for `EACCES` in `syscall` on `path` (and `dest`). */
function denied(syscall: string, path: string, dest?: string): string {
  return `EACCES: permission denied, ${syscall} '${path}'${dest === undefined ? "" : ` -> '${dest}'`}`;
}

/** Asserts `result` failed `permission_denied` at `path` with Node's message. */
function deniedAt(result: Result<unknown, FileError>, what: string, path: string, message: string): void {
  const error = fails(result, "permission_denied", what, path);
  assert.equal(error.message, message, `${what}: message`);
}

/**
 * Wraps a permission case: it fails, instead of passing vacuously, when the target's user is root after all
 * (the runner declared `permissions` for a target on which `chmod 000` denies nothing).
 */
export function withPermissions(setup: Setup, body: (env: ExecutionEnv) => Promise<void>) {
  return async (env: ExecutionEnv): Promise<void> => {
    const uid = (await script(setup, env, "id -u")).trim();
    assert.notEqual(uid, "0", "a permission case runs as root: file permissions deny root nothing");
    await body(env);
  };
}

/** Runs `body` with the modes of `modes` applied, restoring 755 afterwards so the case directory can go. */
async function withModes(
  setup: Setup,
  env: ExecutionEnv,
  modes: Record<string, string>,
  body: () => Promise<void>,
): Promise<void> {
  const paths = Object.keys(modes);
  await script(setup, env, paths.map((path) => `chmod ${modes[path]} '${path}'`).join(" && "));
  try {
    await body();
  } finally {
    await script(setup, env, paths.map((path) => `chmod 755 '${path}'`).join("; "));
  }
}

/** Registers the permission cases. */
export function permissionCases(setup: Setup, define: Define): void {
  const each = (name: string, rule: string, body: (env: ExecutionEnv) => Promise<void>, settings?: object) =>
    define(name, rule, body, { permissions: true, ...(settings === undefined ? {} : { settings }) });

  each("a file without permissions fails permission_denied in every method that opens it", "E2 E3 E4", async (env) => {
    await put(env, "secret.txt", "s");
    await withModes(setup, env, { "secret.txt": "000" }, async () => {
      const path = at(env, "secret.txt");
      for (const [name, call] of Object.entries(opens)) {
        deniedAt(await call(env, "secret.txt"), name, path, denied("open", path));
      }
      assert.equal(value(await env.fileInfo("secret.txt", live), "fileInfo needs no permission on the file").size, 1);
    });
  });

  each("an unreadable directory cannot be listed, nor entries below it looked up", "E2 E3 E4 E5", async (env) => {
    await put(env, "closed/x.txt", "x");
    await withModes(setup, env, { closed: "000" }, async () => {
      const dir = at(env, "closed");
      const file = at(env, "closed", "x.txt");
      deniedAt(await env.listDir("closed", live), "listDir", dir, denied("scandir", dir));
      deniedAt(await env.openDirReader("closed", live), "openDirReader", dir, denied("opendir", dir));
      deniedAt(await env.fileInfo("closed/x.txt", live), "fileInfo", file, denied("lstat", file));
      deniedAt(await env.exists("closed/x.txt", live), "exists", file, denied("lstat", file));
      deniedAt(await env.readTextFile("closed/x.txt", live), "readTextFile", file, denied("open", file));
      deniedAt(await env.canonicalPath("closed/x.txt", live), "canonicalPath", file, denied("realpath", file));
      deniedAt(await env.remove("closed", { recursive: true }, live), "remove", dir, denied("scandir", dir));
    });
  });

  each("nothing can be made, removed or renamed in a read-only directory", "E2 E3 E4 E5", async (env) => {
    await put(env, "ro/f.txt", "f");
    await put(env, "tree/a", "a");
    await put(env, "tree/inner/y", "y");
    await withModes(setup, env, { ro: "555", "tree/inner": "555" }, async () => {
      const p = (...names: string[]) => at(env, ...names);
      deniedAt(
        await env.createDir("ro/new", undefined, live),
        "createDir",
        p("ro", "new"),
        denied("mkdir", p("ro", "new")),
      );
      deniedAt(
        await env.createDir("ro/a/b", { recursive: true }, live),
        "createDir recursive",
        p("ro", "a"),
        denied("mkdir", p("ro", "a")),
      );
      deniedAt(
        await env.writeFile("ro/new.txt", "n", live),
        "writeFile",
        p("ro", "new.txt"),
        denied("open", p("ro", "new.txt")),
      );
      deniedAt(
        await env.writeFile("ro/sub/new.txt", "n", live),
        "writeFile making its directory",
        p("ro", "sub"),
        denied("mkdir", p("ro", "sub")),
      );
      deniedAt(
        await env.remove("ro/f.txt", undefined, live),
        "remove",
        p("ro", "f.txt"),
        denied("unlink", p("ro", "f.txt")),
      );
      deniedAt(
        await env.renameFile("ro/f.txt", "moved", live),
        "renameFile out",
        p("ro", "f.txt"),
        denied("rename", p("ro", "f.txt"), p("moved")),
      );
      deniedAt(
        await env.renameFile("tree/a", "ro/a", live),
        "renameFile in",
        p("tree", "a"),
        denied("rename", p("tree", "a"), p("ro", "a")),
      );
      deniedAt(
        await env.remove("tree", { recursive: true }, live),
        "remove recursive",
        p("tree", "inner", "y"),
        denied("unlink", p("tree", "inner", "y")),
      );
      assert.equal(value(await env.readTextFile("ro/f.txt", live), "the file is still there"), "f");
    });
  });

  each("a directory reader fails at each entry it cannot look up and goes on after it", "D5 E2", async (env) => {
    await put(env, "unsearchable/c.txt", "c");
    await put(env, "unsearchable/sub/d.bin", "d");
    await withModes(setup, env, { unsearchable: "444" }, async () => {
      const reader = value(await env.openDirReader("unsearchable", live), "open");
      try {
        // A directory that can be read but not searched: every entry's lstat fails, each one ends a page.
        const failed: string[] = [];
        for (const max of [2, 1]) {
          const error = fails(await reader.next(max, live), "permission_denied", `next(${max})`);
          assert.equal(error.message, denied("lstat", String(error.path)), `next(${max}): message`);
          failed.push(String(error.path));
        }
        assert.deepEqual(failed.sort(), [at(env, "unsearchable", "c.txt"), at(env, "unsearchable", "sub")]);
        assert.deepEqual(value(await reader.next(1, live), "after both"), { entries: [], done: true });
      } finally {
        await reader.close(live);
      }
    });
  });

  each(
    "a recursive remove failing in several places reports the failure that completes first in Node",
    "M5 E2",
    async (env) => {
      // Node's rimraf removes the children of a directory concurrently and reports the first failure to complete:
      // b/x fails after five steps (lstat, rmdir, scandir, lstat, unlink), a/c/y after eight, although `a` comes
      // first in byte order (measured: b/x in 40 of 40 runs).
      await put(env, "multi/a/c/y", "y");
      await put(env, "multi/b/x", "x");
      await withModes(setup, env, { "multi/a/c": "555", "multi/b": "555" }, async () => {
        const p = (...names: string[]) => at(env, "multi", ...names);
        deniedAt(
          await env.remove("multi", { recursive: true }, live),
          "remove recursive",
          p("b", "x"),
          denied("unlink", p("b", "x")),
        );
        assert.equal(value(await env.readTextFile("multi/a/c/y", live), "the deeper file is still there"), "y");
      });
    },
  );

  for (const { label, watch } of [
    { label: "native", watch: { mode: "native" as const } },
    { label: "polling", watch: { mode: "polling" as const, pollIntervalMs: 100 } },
  ]) {
    each(
      `watch (${label}): an unreadable target fails permission_denied; an unreadable directory below one is skipped`,
      "WA1 WA4",
      async (env) => {
        await put(env, "closed/x.txt", "x");
        await put(env, "tree/inner/y", "y");
        await withModes(setup, env, { closed: "000", "tree/inner": "000" }, async () => {
          const dir = at(env, "closed");
          const failed = (path: string) => env.watch([{ path }], () => {}, live);
          deniedAt(await failed("closed"), "a directory target", dir, denied("scandir", dir));
          for (const path of ["closed/x.txt", "closed/missing", "tree/inner/y"]) {
            deniedAt(await failed(path), `target ${path}`, at(env, path), denied("stat", at(env, path)));
          }
          const { watcher, recorder } = await watching(env, [{ path: "tree", recursive: true }], watch.mode);
          try {
            const from = recorder.mark();
            await put(env, "tree/new.txt", "n");
            await recorder.covered(at(env, "tree", "new.txt"), "a write beside the unreadable directory", from);
          } finally {
            await watcher.close(live);
          }
        });
      },
      { watch },
    );

    each(
      `watch (${label}): a target that becomes unreadable delivers permission_denied and stops`,
      "WA11 E2",
      async (env) => {
        await put(env, "tree/a", "a");
        const { watcher, recorder } = await watching(env, [{ path: "tree" }], watch.mode);
        try {
          await withModes(setup, env, { tree: "000" }, async () => {
            const stopped = await recorder.waitFor((change) => "error" in change, "the error", 0);
            const error = (stopped as { error: FileError }).error;
            assert.equal(error.name, "FileError", "name");
            assert.equal(error.code, "permission_denied", "code");
            assert.equal(error.message, denied("scandir", at(env, "tree")), "message");
            assert.equal(error.path, undefined, "no path");
          });
          // Stopped for good: a write that a second watcher sees is not reported by the stopped one.
          const witness = await watching(env, [{ path: "tree/b" }], watch.mode);
          try {
            const from = witness.recorder.mark();
            await put(env, "tree/b", "b");
            await witness.recorder.covered(at(env, "tree", "b"), "the second watcher sees a later write", from);
          } finally {
            await witness.watcher.close(live);
          }
          const last = recorder.changes.at(-1);
          assert.ok(
            last !== undefined && "error" in last,
            `the error is the last change: ${JSON.stringify(recorder.changes)}`,
          );
        } finally {
          await watcher.close(live);
        }
      },
      { watch },
    );
  }
}
