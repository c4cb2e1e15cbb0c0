/**
 * Windows-only cases (registered when the target is Windows): libuv's file sharing, directories opened "r+",
 * and Node's messages where they are Windows' own. Found by the differential run under Wine (tools/windows/).
 */
import { assert, at, execFails, fails, live, put, text, value } from "./support.js";
import type { Define, Setup } from "./types.js";

export function windowsCases(setup: Setup, define: Define): void {
  if (!setup.windows) return;

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
