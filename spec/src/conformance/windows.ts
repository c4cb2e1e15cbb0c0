/**
 * Windows-only cases (registered when the target is Windows): libuv's file sharing, directories opened "r+",
 * and Node's messages where they are Windows' own. Found by the differential run under Wine (tools/windows/).
 */
import { assert, at, execFails, fails, live, put, run, script, sleep, styleOf, text, value } from "./support.js";
import type { Define, Setup } from "./types.js";

export function windowsCases(setup: Setup, define: Define): void {
  if (!setup.windows) return;

  define("paths resolve and join in the win32 flavour", "WIN1 P2 P3 P4 P5 P6 P11 P12 P14", async (env) => {
    const cwd = env.cwd;
    const drive = cwd.slice(0, 2);
    const parent = cwd.slice(0, cwd.lastIndexOf("\\"));
    // A rooted path without a drive (`\x`) takes the drive of the remote process's working directory (P11),
    // which a case cannot know; it is left out here.
    const home = (await script(setup, env, 'printf %s "$USERPROFILE"')).trim();
    const resolved: [string, string][] = [
      ["a/b", `${cwd}\\a\\b`],
      ["a\\b\\", `${cwd}\\a\\b`],
      ["./a//b/./", `${cwd}\\a\\b`],
      ["", cwd],
      ["..", parent],
      [`${drive}/a/../../b`, `${drive}\\b`],
      ["\\\\server\\share\\x\\..\\y", "\\\\server\\share\\y"],
      ["~", home],
      ["~\\x\\..\\y", `${home}\\y`],
      ["~/y", `${home}\\y`],
      ["~user", `${cwd}\\~user`],
      [`file:///${drive}/a%20b`, `${drive}\\a b`],
    ];
    for (const [path, expected] of resolved) {
      assert.equal(value(await env.absolutePath(path, live), JSON.stringify(path)), expected, JSON.stringify(path));
    }
    const joined: [string[], string][] = [
      [[], "."],
      [["a/", "b/"], "a\\b\\"],
      [["a", "", "b"], "a\\b"],
      [["a", ".."], "."],
      [[`${drive}\\a`, "..\\..\\b"], `${drive}\\b`],
      [["/a", "b"], "\\a\\b"],
    ];
    for (const [parts, expected] of joined) {
      assert.equal(value(await env.joinPath(parts, live), JSON.stringify(parts)), expected, JSON.stringify(parts));
    }
  });

  define("a file open in a reader can still be renamed and removed, as libuv shares delete", "WIN2", async (env) => {
    await put(env, "data.txt", "one");
    const reader = value(await env.openBinaryReader("data.txt", undefined, live), "open");
    const lines = value(await env.openTextLineReader("data.txt", live), "open lines");
    value(await env.renameFile("data.txt", "moved.txt", live), "rename while open");
    assert.equal(await text(env, "moved.txt"), "one");
    value(await env.remove("moved.txt", undefined, live), "remove while open");
    assert.equal(Buffer.from(value(await reader.read(0, 10, live), "read")).toString(), "one");
    await reader.close(live);
    await lines.close(live);
  });

  define("a spill file can be renamed while the command still writes to it", "WIN5 X26", async (env) => {
    const probe = value(await env.createTempDir("probe-", live), "createTempDir");
    const path = styleOf(probe);
    const tmpdir = path.dirname(probe);
    const before = new Set(value(await env.listDir(tmpdir, live), "list tmpdir").map((entry) => entry.name));
    // The command spills at once, then waits until the case has moved its spill file.
    const command = run(env, "printf '%0200d' 0; until [ -e release ]; do sleep 0.1; done; printf end", {
      spill: { afterBytes: 100, afterLines: 100 },
      timeout: 30,
    });
    let spill: string | undefined;
    for (let attempt = 0; spill === undefined && attempt < 300; attempt++) {
      for (const entry of value(await env.listDir(tmpdir, live), "list tmpdir")) {
        if (before.has(entry.name) || !entry.name.startsWith("tmp-")) continue;
        const inside = value(await env.listDir(entry.path, live), "list spill dir");
        const file = inside.find((candidate) => candidate.name.startsWith("pi-output-"));
        if (file) spill = file.path;
      }
      if (spill === undefined) await sleep(50);
    }
    assert.ok(spill, "the spill file appeared");
    const moved = `${spill}.moved`;
    const renamed = await env.renameFile(spill, moved, live);
    await put(env, "release", "");
    const out = await command;
    value(renamed, "rename while the command writes");
    assert.deepEqual(value(out.result, "exec"), { exitCode: 0, spillPath: spill });
    assert.equal(await text(env, moved), `${"0".repeat(200)}end`, "the moved file has the whole output");
    value(await env.remove(path.dirname(spill), { recursive: true }, live), "remove spill dir");
    value(await env.remove(probe, { recursive: true }, live), "remove probe");
  });

  define("a directory opens r+: truncateFile fails in ftruncate, flushFile after fstat", "WIN5", async (env) => {
    value(await env.createDir("dir", undefined, live), "createDir");
    const truncate = fails(await env.truncateFile("dir", 0, live), "invalid", "truncate", at(env, "dir"));
    assert.equal(truncate.message, "EINVAL: invalid argument, ftruncate", "truncate message");
    const flush = fails(await env.flushFile("dir", live), "is_directory", "flush", at(env, "dir"));
    assert.equal(flush.message, "Is a directory", "flush message");
    const flushCwd = fails(await env.flushFile(".", live), "is_directory", "flush .", env.cwd);
    assert.equal(flushCwd.message, "Is a directory", "flush . message");
  });

  define("batch files are refused by name without a shell, before any lookup", "WIN10", async (env) => {
    await put(env, "x.bat", "@echo hi\r\n");
    for (const program of ["x.bat", "X.BAT", at(env, "x.bat"), "x.bat. .", "missing.cmd"]) {
      execFails(await env.exec([program], undefined, live), "spawn_error", program, "spawn EINVAL");
    }
    const missing = execFails(await env.exec(["missing.cmdx"], undefined, live), "spawn_error", "not a batch name");
    assert.equal(missing.message, "spawn missing.cmdx ENOENT");
  });
}
