/** `ls`, `cat`, `put`, `get`, `rm`, `find` and `watch`: the file half of the env, one call per command. */
import { readFile, writeFile } from "node:fs/promises";
import type { FileError, FileInfo, Result } from "@outpost/sdk";
import { CliFailure, failed, localFileCode } from "../exit.js";
import { outputClosed } from "../output.js";
import type { Session } from "../target.js";

const context = { abortSignal: undefined };
/** For calls whose output streams: they stop when the reader of stdout goes away. */
const streaming = { abortSignal: outputClosed };

function value<T>(what: string, result: Result<T, FileError>): T {
  if (!result.ok) throw failed(what, result.error);
  return result.value;
}

function kindMark(info: FileInfo): string {
  if (info.kind === "directory") return "/";
  if (info.kind === "symlink") return "@";
  return "";
}

/** One line per entry, sorted by name: kind mark, size, name. */
export async function ls(session: Session, path: string): Promise<void> {
  const info = value(`ls ${path}`, await session.env.fileInfo(path, context));
  const entries = info.kind === "directory" ? value(`ls ${path}`, await session.env.listDir(path, context)) : [info];
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (outputClosed.aborted) return;
    process.stdout.write(`${String(entry.size).padStart(10)}  ${entry.name}${kindMark(entry)}\n`);
  }
}

/** The file's bytes, as they are, to stdout. */
export async function cat(session: Session, path: string): Promise<void> {
  const bytes = value(`cat ${path}`, await session.env.readBinaryFile(path, context));
  // A failed write is reported by stdout's 'error' event (output.ts), which main.ts judges.
  await new Promise<void>((resolve) => process.stdout.write(bytes, () => resolve()));
}

/** Copies a local file (or stdin for `-`) to the target. */
export async function put(session: Session, local: string, remote: string): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = local === "-" ? await readStdin() : await readFile(local);
  } catch (error) {
    throw new CliFailure(`put: cannot read ${local}: ${(error as Error).message}`, localFileCode(error));
  }
  value(`put ${remote}`, await session.env.writeFile(remote, bytes, context));
}

/** Copies a file from the target to a local path (or stdout for `-`). */
export async function get(session: Session, remote: string, local: string): Promise<void> {
  if (local === "-") return cat(session, remote);
  const bytes = value(`get ${remote}`, await session.env.readBinaryFile(remote, context));
  try {
    await writeFile(local, bytes);
  } catch (error) {
    throw new CliFailure(`get: cannot write ${local}: ${(error as Error).message}`, localFileCode(error));
  }
}

/** Removes a path (a directory only with `recursive`). */
export async function rm(
  session: Session,
  path: string,
  options: { recursive?: boolean; force?: boolean },
): Promise<void> {
  value(`rm ${path}`, await session.env.remove(path, options, context));
}

/** The files under `dir` (gitignore-aware, on the agent's `listFiles`), one path per line as pages arrive. */
export async function find(
  session: Session,
  dir: string,
  options: { glob?: string[]; limit?: number; hidden: boolean; ignore: boolean },
): Promise<void> {
  const result = value(
    `find ${dir}`,
    await session.env.listFiles(
      dir,
      {
        glob: options.glob,
        limit: options.limit,
        hidden: options.hidden,
        ignore: options.ignore,
        onPage: (paths) => {
          if (!outputClosed.aborted) process.stdout.write(paths.map((path) => `${path}\n`).join(""));
        },
      },
      streaming,
    ),
  );
  if (result.truncated) process.stderr.write(`outpost: find: stopped at the limit of ${options.limit} paths\n`);
}

/**
 * Prints each change as it comes (one changed path per line; `overflow` when changes were lost), until Ctrl-C, the
 * reader of stdout going away, or the watcher failing.
 */
export async function watch(session: Session, paths: string[], options: { recursive: boolean }): Promise<void> {
  let stop: (error?: CliFailure) => void = () => {};
  const done = new Promise<CliFailure | undefined>((resolve) => (stop = resolve));
  const watcher = value(
    "watch",
    await session.env.watch(
      paths.map((path) => ({ path, recursive: options.recursive })),
      (change) => {
        if ("paths" in change) process.stdout.write(change.paths.map((path) => `${path}\n`).join(""));
        else if ("overflow" in change) process.stdout.write("overflow: changes were lost; rescan\n");
        else stop(failed("watch", change.error));
      },
      context,
    ),
  );
  process.stderr.write(`outpost: watching ${paths.join(", ")} (${watcher.mode}); Ctrl-C stops\n`);
  const interrupt = () => stop();
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  outputClosed.addEventListener("abort", interrupt);
  if (outputClosed.aborted) stop();
  // The SDK never lets an open watch keep a process alive; this command exists to wait for it, so it holds the loop.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    const failure = await done;
    if (failure !== undefined) throw failure;
  } finally {
    clearInterval(keepAlive);
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    outputClosed.removeEventListener("abort", interrupt);
    await watcher.close(context);
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
