/**
 * Devices, FIFOs and directories read as files (pi-env §6.3 "reads devices, FIFOs and directories like Node"):
 * every file method on `/dev/null`, on a FIFO (fed by a writer started on this machine before each blocking
 * call, with random contents), and on a directory, compared between the reference and each Outpost env.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { ExecutionEnv } from "@outpost/sdk";
import fc from "fast-check";
import { expect } from "vitest";
import { printfEscapes, trickyBytes } from "./bytes.js";
import { propertyTest, withDeadline } from "./harness.js";
import type { Normalizer } from "./normalize.js";
import { dirPages } from "./observe.js";
import { propertyFixture, type Target } from "./targets.js";

const BASE_RUNS = 5;
const BASE_TIME_MS = 12_000;
/** A blocking call that has not finished after this long is reported as hung. */
const DEADLINE_MS = 10_000;

const LIVE = { abortSignal: undefined };

const fixture = propertyFixture();
const { reference, targets } = fixture;

/** Starts a writer that opens the FIFO (blocking until a reader opens it) and writes `bytes`. */
function feed(root: string, bytes: Uint8Array): ChildProcess {
  const writer = spawn("sh", ["-c", `printf '${printfEscapes(bytes)}' > fifo`], { cwd: root, stdio: "ignore" });
  writer.on("error", () => {});
  return writer;
}

/** What one env does with the special files, normalized, in a fixed order. */
async function observe(target: Target, contents: Uint8Array): Promise<Record<string, unknown>> {
  const root = fixture.sandbox.root("special");
  const env = target.at(root);
  const n = fixture.sandbox.normalizer(root);
  const out: Record<string, unknown> = {};
  const record = async (label: string, run: () => Promise<unknown>) => {
    try {
      out[label] = await withDeadline(run(), DEADLINE_MS);
    } catch (error) {
      out[label] = { threw: n.value(error) };
    }
  };
  /** Runs a call that opens the FIFO for reading, with a writer on the other side. */
  const fed = async (label: string, run: () => Promise<unknown>) => {
    const writer = feed(root, contents);
    await record(label, run);
    // Wait for the writer's end, so that it cannot feed the next call's open.
    if (writer.exitCode === null && writer.signalCode === null) {
      const exited = once(writer, "exit");
      writer.kill("SIGKILL");
      await exited;
    }
  };
  try {
    await record("mkfifo", async () => n.result(await env.exec(["mkfifo", "fifo"], undefined, LIVE)));
    await record("createDir", async () => n.result(await env.createDir("dir", undefined, LIVE)));
    for (const path of ["/dev/null", "fifo", "dir"]) await observePath(env, n, path, path === "fifo" ? fed : record);
    await record("listDir", async () => n.result(await env.listDir(".", LIVE)));
    await record("dirReader", async () => dirPages(env, n, ".", 2, 10));
  } finally {
    fixture.sandbox.drop(root);
  }
  return out;
}

type Recorder = (label: string, run: () => Promise<unknown>) => Promise<void>;

async function observePath(env: ExecutionEnv, n: Normalizer, path: string, blocking: Recorder): Promise<void> {
  const record: Recorder = async (label, run) => blocking(`${path}: ${label}`, run);
  await record("readTextFile", async () => n.result(await env.readTextFile(path, LIVE)));
  await record("readBinaryFile", async () => n.result(await env.readBinaryFile(path, LIVE)));
  await record("readTextLines", async () => n.result(await env.readTextLines(path, undefined, LIVE)));
  await record("openTextLineReader+readLine", async () => {
    const opened = await env.openTextLineReader(path, LIVE);
    if (!opened.ok) return n.result(opened);
    const first = n.result(await opened.value.readLine(LIVE));
    await opened.value.close(LIVE);
    return { opened: true, first };
  });
  // The binary reader opens without blocking (O_NONBLOCK) and refuses anything but a regular file.
  await record("openBinaryReader", async () => {
    const opened = await env.openBinaryReader(path, undefined, LIVE);
    if (opened.ok) await opened.value.close(LIVE);
    return n.result(opened.ok ? { ok: true, value: "<reader>" } : opened);
  });
  await record("fileInfo", async () => n.result(await env.fileInfo(path, LIVE)));
  await record("exists", async () => n.result(await env.exists(path, LIVE)));
  await record("truncateFile", async () => n.result(await env.truncateFile(path, 0, LIVE)));
  await record("flushFile", async () => n.result(await env.flushFile(path, LIVE)));
  await record("canonicalPath", async () => n.result(await env.canonicalPath(path, LIVE)));
}

for (const target of targets) {
  const name = `${target.name} reads devices, FIFOs and directories like the reference`;
  propertyTest(
    name,
    { runs: BASE_RUNS, timeMs: BASE_TIME_MS, fixedMs: 90_000 },
    () =>
      fc.asyncProperty(trickyBytes(8), async (contents) => {
        const expected = await observe(reference, contents);
        const actual = await observe(target, contents);
        expect(actual).toEqual(expected);
      }),
    {
      runTimeoutMs: 60_000,
      describe: ([contents]) => `  FIFO contents [${Buffer.from(contents).toString("hex")}]`,
    },
  );
}
