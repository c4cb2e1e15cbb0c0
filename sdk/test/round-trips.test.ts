/**
 * What every `ExecutionEnv` call costs on the wire, over the pipe transport to the real agent: the requests it
 * sends and its round trips (requests sent while none of the call's earlier requests was still unanswered, i.e.
 * the times it had to wait a whole round trip). Across a network a round trip is 20–200 ms, so this is the cost
 * that counts there. The table is spec/protocol.md section 13, checked row by row; the budget is asserted: every
 * small operation takes exactly one round trip, `exec` one plus its run, `listFiles` one plus its streamed pages.
 * The same calls are also counted with the Outpost additions hidden (an agent that speaks protocol 1 only), and
 * must give the reference's results there too.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "../src/contract/types.js";
import { packagedAgent } from "../src/env/agent-binary.js";
import { RemoteExecutionEnv } from "../src/env/remote-env.js";
import { Connection } from "../src/wire/connection.js";
import { type CallCost, frameTap, roundTrips, type TapEntry } from "./fixtures/frame-tap.js";
import { patterned } from "./fixtures/patterned.js";

const none: Context = { abortSignal: undefined };
const signalled = (): Context => ({ abortSignal: new AbortController().signal });
const KiB = 1024;
const MiB = 1024 * KiB;

/** A call to measure: `prepare` sets up its files (not counted), `call` is the measured part. */
interface Case {
  name: string;
  /** Exactly one round trip for a small operation, `exec` and `listFiles`; undefined: reported only. */
  budget?: 1;
  /**
   * Bulk: its pieces are pipelined, so how many of its requests found none of the others unanswered depends on
   * timing; the table says "pipelined" and the test asserts fewer round trips than requests.
   */
  pipelined?: true;
  prepare?: (root: string) => void;
  call: (env: RemoteExecutionEnv, root: string) => Promise<unknown>;
}

function expectOk(result: { ok: boolean; error?: unknown }): void {
  if (!result.ok) throw new Error(`call failed: ${String(result.error)}`);
}

/** The calls of the table, in its order. */
const cases: Case[] = [
  { name: "absolutePath", call: (env) => env.absolutePath("a", none) },
  { name: "joinPath", call: (env) => env.joinPath(["a", "b"], none) },
  {
    name: "fileInfo",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), "x"),
    call: (env) => env.fileInfo("f", none),
  },
  {
    name: "exists (present)",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), "x"),
    call: (env) => env.exists("f", none),
  },
  { name: "exists (missing)", budget: 1, call: (env) => env.exists("missing", none) },
  {
    name: "readTextFile 0 B",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), ""),
    call: (env) => env.readTextFile("f", none),
  },
  {
    name: "readTextFile 1 KiB",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), patterned(KiB)),
    call: (env) => env.readTextFile("f", none),
  },
  {
    name: "readTextFile 512 KiB",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), patterned(512 * KiB)),
    call: (env) => env.readTextFile("f", signalled()),
  },
  {
    name: "readBinaryFile 0 B",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), ""),
    call: (env) => env.readBinaryFile("f", none),
  },
  {
    name: "readBinaryFile 512 KiB",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), patterned(512 * KiB)),
    call: (env) => env.readBinaryFile("f", signalled()),
  },
  {
    name: "readBinaryFile 4 MiB",
    pipelined: true,
    prepare: (root) => writeFileSync(join(root, "f"), patterned(4 * MiB)),
    call: (env) => env.readBinaryFile("f", signalled()),
  },
  { name: "writeFile 0 B", budget: 1, call: (env) => env.writeFile("f", "", none) },
  { name: "writeFile 512 KiB", budget: 1, call: (env) => env.writeFile("f", patterned(512 * KiB), none) },
  {
    name: "writeFile 512 KiB, signal",
    budget: 1,
    call: (env) => env.writeFile("f", patterned(512 * KiB), signalled()),
  },
  { name: "writeFile 4 MiB", pipelined: true, call: (env) => env.writeFile("f", patterned(4 * MiB), none) },
  {
    name: "writeFile 4 MiB, signal",
    pipelined: true,
    call: (env) => env.writeFile("f", patterned(4 * MiB), signalled()),
  },
  {
    name: "appendFile 512 KiB, signal",
    budget: 1,
    call: (env) => env.appendFile("f", patterned(512 * KiB), signalled()),
  },
  {
    name: "appendFile 4 MiB, signal",
    pipelined: true,
    call: (env) => env.appendFile("f", patterned(4 * MiB), signalled()),
  },
  {
    name: "truncateFile",
    prepare: (root) => writeFileSync(join(root, "f"), "xyz"),
    call: (env) => env.truncateFile("f", 1, none),
  },
  {
    name: "flushFile",
    prepare: (root) => writeFileSync(join(root, "f"), "xyz"),
    call: (env) => env.flushFile("f", none),
  },
  { name: "createDir", budget: 1, call: (env) => env.createDir("d/e", { recursive: true }, none) },
  {
    name: "remove (file)",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), "x"),
    call: (env) => env.remove("f", undefined, none),
  },
  {
    name: "remove (tree)",
    budget: 1,
    prepare: (root) => {
      mkdirSync(join(root, "d/e"), { recursive: true });
      writeFileSync(join(root, "d/e/f"), "x");
    },
    call: (env) => env.remove("d", { recursive: true }, none),
  },
  {
    name: "renameFile",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), "x"),
    call: (env) => env.renameFile("f", "g", none),
  },
  {
    name: "listDir (10 entries)",
    budget: 1,
    prepare: (root) => {
      mkdirSync(join(root, "d"));
      for (let i = 0; i < 10; i++) writeFileSync(join(root, "d", `f${i}`), "x");
    },
    call: (env) => env.listDir("d", none),
  },
  {
    name: "listDir (empty)",
    budget: 1,
    prepare: (root) => mkdirSync(join(root, "d")),
    call: (env) => env.listDir("d", none),
  },
  {
    name: "listDir (3000 entries)",
    prepare: (root) => {
      mkdirSync(join(root, "d"));
      for (let i = 0; i < 3000; i++) writeFileSync(join(root, "d", `f${i}`), "");
    },
    call: (env) => env.listDir("d", none),
  },
  { name: "createTempDir", budget: 1, call: (env) => env.createTempDir("outpost-rt-", none) },
  { name: "createTempFile", budget: 1, call: (env) => env.createTempFile({ prefix: "outpost-rt-" }, none) },
  {
    name: "canonicalPath",
    budget: 1,
    prepare: (root) => writeFileSync(join(root, "f"), "x"),
    call: (env) => env.canonicalPath("f", none),
  },
  { name: "exec (true)", budget: 1, call: (env) => env.exec("true", undefined, none) },
  {
    name: "exec (output)",
    budget: 1,
    call: (env) => env.exec("seq 1 20000", { onOutput: () => {} }, none),
  },
  {
    name: "listFiles (50 files)",
    budget: 1,
    prepare: (root) => {
      mkdirSync(join(root, "t/a"), { recursive: true });
      for (let i = 0; i < 50; i++) writeFileSync(join(root, "t/a", `f${i}`), "");
    },
    call: (env) => env.listFiles("t", undefined, none),
  },
  {
    name: "openBinaryReader + read + close",
    prepare: (root) => writeFileSync(join(root, "f"), patterned(KiB)),
    call: async (env) => {
      const reader = await env.openBinaryReader("f", undefined, none);
      if (!reader.ok) return reader;
      await reader.value.read(0, 100, none);
      await reader.value.close(none);
    },
  },
  {
    name: "readTextLines (3 lines)",
    prepare: (root) => writeFileSync(join(root, "f"), "a\nb\nc\n"),
    call: (env) => env.readTextLines("f", undefined, none),
  },
  {
    name: "watch + close",
    prepare: (root) => mkdirSync(join(root, "d")),
    call: async (env) => {
      const watcher = await env.watch([{ path: "d" }], () => {}, none);
      if (watcher.ok) await watcher.value.close(none);
      return watcher;
    },
  },
];

/** `op×n` for runs of the same op. */
function compress(ops: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < ops.length; ) {
    let j = i;
    while (j < ops.length && ops[j] === ops[i]) j++;
    out.push(j - i > 1 ? `${ops[i]}×${j - i}` : ops[i]);
    i = j;
  }
  return out.join(" ") || "—";
}

/** The features of the Outpost additions that remove round trips; hidden, the agent looks like protocol 1. */
const FUSING_FEATURES = ["readFile", "listDir", "mkdtemp.file"];

interface Measured {
  cost: CallCost;
  result: unknown;
}

/** Runs every case against a fresh directory, through a connection whose frames are tapped. */
async function measureAll(hide: readonly string[]): Promise<Map<string, Measured>> {
  const { log, launch } = frameTap(packagedAgent());
  const connection = new Connection({ launch });
  const view = {
    info: async () => {
      const info = await connection.info();
      return { ...info, features: info.features.filter((feature) => !hide.includes(feature)) };
    },
    request: connection.request.bind(connection),
  } as unknown as Connection;
  const base = realpathSync(mkdtempSync(join(tmpdir(), "outpost-round-trips-")));
  const measured = new Map<string, Measured>();
  try {
    await connection.info();
    for (const [index, testCase] of cases.entries()) {
      const root = join(base, String(index));
      mkdirSync(root);
      testCase.prepare?.(root);
      const env = new RemoteExecutionEnv({ connection: view, id: "outpost:rt", cwd: root });
      const start = log.length;
      const result = await testCase.call(env, root);
      if (result !== null && typeof result === "object" && "ok" in result) expectOk(result as { ok: boolean });
      measured.set(testCase.name, { cost: roundTrips(log.slice(start) as TapEntry[]), result });
    }
  } finally {
    await connection.close();
    rmSync(base, { recursive: true, force: true });
  }
  return measured;
}

let fused: Map<string, Measured>;
let protocol1: Map<string, Measured>;

beforeAll(async () => {
  fused = await measureAll([]);
  protocol1 = await measureAll(FUSING_FEATURES);
}, 120_000);

afterAll(() => {
  // Printed so that a changed count can be copied into spec/protocol.md.
  if (fused !== undefined) console.log(table().join("\n"));
});

function table(): string[] {
  const rows = [
    "| call | requests | round trips | requests sent | protocol 1: requests / round trips |",
    "|---|--:|--:|---|--:|",
  ];
  for (const { name, pipelined } of cases) {
    const now = fused.get(name)?.cost;
    const old = protocol1.get(name)?.cost;
    if (now === undefined || old === undefined) continue;
    const trips = (cost: CallCost) => (pipelined ? "pipelined" : String(cost.roundTrips));
    rows.push(`| ${name} | ${now.requests} | ${trips(now)} | ${compress(now.ops)} | ${old.requests} / ${trips(old)} |`);
  }
  return rows;
}

describe("round trips per call over the pipe transport", () => {
  it.each(cases.filter((testCase) => testCase.budget !== undefined).map((testCase) => testCase.name))(
    "%s takes exactly one round trip",
    (name) => {
      const { cost } = fused.get(name) as Measured;
      expect({ name, roundTrips: cost.roundTrips, ops: cost.ops }).toEqual({ name, roundTrips: 1, ops: cost.ops });
    },
  );

  it.each(cases.filter((testCase) => testCase.pipelined).map((testCase) => testCase.name))(
    "%s pipelines its pieces: fewer round trips than requests",
    (name) => {
      for (const measured of [fused, protocol1]) {
        const { cost } = measured.get(name) as Measured;
        expect(cost.roundTrips).toBeLessThan(cost.requests);
      }
    },
  );

  it("matches the table in spec/protocol.md section 13", () => {
    const spec = readFileSync(new URL("../../spec/protocol.md", import.meta.url), "utf8");
    const missing = table().filter((row) => !spec.includes(`\n${row}\n`));
    expect(missing).toEqual([]);
  });

  it("gives the same results with the additions hidden (protocol 1)", () => {
    const comparable = (value: unknown): unknown =>
      JSON.parse(
        JSON.stringify(value, (key, item: unknown) =>
          key === "mtimeMs" || key === "spillPath"
            ? undefined
            : typeof item === "string"
              ? item
                  .replace(/\/outpost-round-trips-[^/]+\/\d+/, "<root>")
                  .replace(/tmp-[^/]+/, "tmp-X")
                  .replace(/outpost-rt-[^/]*/, "outpost-rt-X")
              : item,
        ) ?? "null",
      );
    for (const { name } of cases) {
      expect([name, comparable(protocol1.get(name)?.result)]).toEqual([name, comparable(fused.get(name)?.result)]);
    }
  });
});
