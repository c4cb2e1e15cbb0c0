/** The error table: which code and which path every method reports for the common failures. */
import type { ExecutionEnv, FileError, Result } from "@outpost/sdk";
import { aborted, assert, at, belowFile, fails, fileInTheWay, live, put, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

type Call = (env: ExecutionEnv, path: string) => Promise<Result<unknown, FileError>>;

/** Every path-taking method, called in a way that needs the path to exist. */
const calls: Record<string, Call> = {
  readTextFile: (env, path) => env.readTextFile(path, live),
  readBinaryFile: (env, path) => env.readBinaryFile(path, live),
  openTextLineReader: (env, path) => env.openTextLineReader(path, live),
  readTextLines: (env, path) => env.readTextLines(path, undefined, live),
  openBinaryReader: (env, path) => env.openBinaryReader(path, undefined, live),
  truncateFile: (env, path) => env.truncateFile(path, 0, live),
  flushFile: (env, path) => env.flushFile(path, live),
  renameFile: (env, path) => env.renameFile(path, "elsewhere", live),
  fileInfo: (env, path) => env.fileInfo(path, live),
  listDir: (env, path) => env.listDir(path, live),
  openDirReader: (env, path) => env.openDirReader(path, live),
  canonicalPath: (env, path) => env.canonicalPath(path, live),
  remove: (env, path) => env.remove(path, undefined, live),
};

/** Registers the error-table cases. */
export function errorCases(setup: Setup, define: Define): void {
  define("every method reports a missing path as not_found with the resolved path", "E2 E4 E5", async (env) => {
    for (const [name, call] of Object.entries(calls)) {
      const error = fails(await call(env, "missing/x.txt"), "not_found", name, at(env, "missing/x.txt"));
      assert.ok(error.message.length > 0, `${name}: a message`);
    }
    fails(await env.createDir("missing/x", { recursive: false }, live), "not_found", "createDir", at(env, "missing/x"));
  });

  define("every method reports a path below a file as not_directory", "E2 E4 E5 W2", async (env) => {
    await put(env, "f.txt", "x");
    for (const [name, call] of Object.entries(calls)) {
      fails(await call(env, "f.txt/x"), belowFile(setup), name, at(env, "f.txt/x"));
    }
    if (setup.windows) assert.equal(value(await env.exists("f.txt/x", live), "exists"), false, "WIN2: not_found");
    else fails(await env.exists("f.txt/x", live), "not_directory", "exists", at(env, "f.txt/x"));
    const createDir = fileInTheWay(setup, env, "f.txt", "f.txt/x");
    fails(await env.createDir("f.txt/x", undefined, live), "not_directory", "createDir", createDir);
    const parents = fileInTheWay(setup, env, "f.txt", "f.txt/x");
    fails(await env.writeFile("f.txt/x/y", "", live), "not_directory", "writeFile", parents);
  });

  define("methods that need a file report a directory as is_directory", "E2 E4 W1 W4 W5 R10", async (env) => {
    value(await env.createDir("dir", undefined, live), "createDir");
    for (const name of ["readTextFile", "readBinaryFile", "openBinaryReader", "truncateFile", "flushFile"]) {
      // Windows opens a directory "r+", so truncating one fails in the truncate itself (WIN5).
      const code = setup.windows && name === "truncateFile" ? "invalid" : "is_directory";
      fails(await calls[name](env, "dir"), code, name, at(env, "dir"));
    }
    fails(await env.writeFile("dir", "x", live), "is_directory", "writeFile", at(env, "dir"));
    fails(await env.appendFile("dir", "x", live), "is_directory", "appendFile", at(env, "dir"));
  });

  define("file errors are FileError instances with Node-style messages", "E1 E3", async (env) => {
    const result = await env.readTextFile("missing", live);
    const error = fails(result, "not_found", "readTextFile", at(env, "missing"));
    assert.equal(error.name, "FileError");
    assert.equal(typeof error.message, "string");
    assert.ok(error.message.includes("ENOENT"), `a Node-style message: ${error.message}`);
  });

  define("file error messages follow Node's format", "E3 E7", async (env) => {
    await put(env, "f.txt", "x");
    value(await env.createDir("dir/sub", undefined, live), "createDir");
    const message = async (result: Promise<Result<unknown, FileError>>) => {
      const settled = await result;
      return settled.ok ? "(success)" : settled.error.message;
    };
    assert.equal(
      await message(env.fileInfo("missing", live)),
      `ENOENT: no such file or directory, lstat '${at(env, "missing")}'`,
    );
    assert.equal(
      await message(env.readTextFile("missing", live)),
      `ENOENT: no such file or directory, open '${at(env, "missing")}'`,
    );
    assert.equal(await message(env.listDir("f.txt", live)), `ENOTDIR: not a directory, scandir '${at(env, "f.txt")}'`);
    assert.equal(
      await message(env.createDir("f.txt", undefined, live)),
      `EEXIST: file already exists, mkdir '${at(env, "f.txt")}'`,
    );
    assert.equal(
      await message(env.renameFile("missing", "other", live)),
      `ENOENT: no such file or directory, rename '${at(env, "missing")}' -> '${at(env, "other")}'`,
    );
    assert.equal(await message(env.readTextFile("dir", live)), "EISDIR: illegal operation on a directory, read");
    assert.equal(
      await message(env.remove("dir", undefined, live)),
      `Path is a directory: rm returned EISDIR (is a directory) ${at(env, "dir")}`,
    );
    assert.equal(await message(env.fileInfo("f.txt", aborted())), "aborted");
  });

  define("permission failures are permission_denied (root may read anything)", "E2", async (env) => {
    await put(env, "secret.txt", "s");
    await script(setup, env, "chmod 000 secret.txt");
    const uid = (await script(setup, env, "id -u")).trim();
    const result = await env.readTextFile("secret.txt", live);
    if (uid === "0") assert.equal(value(result, "root reads a mode-000 file"), "s");
    else fails(result, "permission_denied", "readTextFile", at(env, "secret.txt"));
    await script(setup, env, "chmod 600 secret.txt");
  });
}
