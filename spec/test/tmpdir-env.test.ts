/**
 * The temp-directory rule (spec/semantics.md T1) end to end: LocalExecutionEnv's agent started under a given
 * `TMPDIR`/`TMP`/`TEMP`/`PREFIX`, next to the reference under the same environment, with Node's `os.tmpdir()` as the
 * truth. What the rule decides is visible through `createTempDir("")` (a sibling of the temp directory, or a child
 * when one trailing slash is left), `createTempFile` and the spill file of `exec`. The conformance targets pin
 * `TMPDIR` for their whole file, so this lives in a file of its own (vitest forks: process.env is this file's).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ExecutionEnv, LocalExecutionEnv } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { afterAll, describe, expect, it } from "vitest";

const live = { abortSignal: undefined };
const variables = ["TMPDIR", "TMP", "TEMP", "PREFIX"] as const;
const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]));
const base = realpathSync(mkdtempSync(join(tmpdir(), "outpost-tmpdir-")));
const t = join(base, "t");
const u = join(base, "u");
mkdirSync(t);
mkdirSync(u);

afterAll(() => {
  setEnvironment(saved);
  rmSync(base, { recursive: true, force: true });
});

/** Sets exactly these of the temp variables (unset the others). */
function setEnvironment(values: Partial<Record<(typeof variables)[number], string | undefined>>): void {
  for (const name of variables) {
    const value = values[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** A regular expression matching `text` literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

/** What the env produced under one environment: a temp directory, a temp file and a spill file. */
async function produce(env: ExecutionEnv, prefix: string): Promise<{ dir: string; file: string; spill: string }> {
  const dir = await env.createTempDir(prefix, live);
  const file = await env.createTempFile({ prefix: "p-", suffix: ".s" }, live);
  const spilled = await env.exec("printf spilled", { spill: { afterBytes: 0, afterLines: 100 } }, live);
  if (!dir.ok) throw dir.error;
  if (!file.ok) throw file.error;
  if (!spilled.ok) throw spilled.error;
  const spill = spilled.value.spillPath;
  if (spill === undefined) throw new Error("the command did not spill");
  return { dir: dir.value, file: file.value, spill };
}

interface Row {
  name: string;
  environment: Partial<Record<(typeof variables)[number], string>>;
  /** os.tmpdir() under that environment, as T1 says. */
  tmpdir: string;
  /** The createTempDir prefix: "" shows the trailing-slash rule, but makes a sibling of /tmp (in /) otherwise. */
  prefix: string;
}

const rows: Row[] = [
  { name: "TMPDIR as is", environment: { TMPDIR: t }, tmpdir: t, prefix: "" },
  { name: "TMPDIR with one trailing slash, which is dropped", environment: { TMPDIR: `${t}/` }, tmpdir: t, prefix: "" },
  {
    name: "TMPDIR with two trailing slashes: one is left",
    environment: { TMPDIR: `${t}//` },
    tmpdir: `${t}/`,
    prefix: "",
  },
  {
    name: "an empty TMPDIR falls back to TMP",
    environment: { TMPDIR: "", TMP: `${t}/`, TEMP: u },
    tmpdir: t,
    prefix: "",
  },
  { name: "TMP comes before TEMP", environment: { TMP: u, TEMP: t }, tmpdir: u, prefix: "" },
  {
    name: "empty TMPDIR and TMP fall back to TEMP",
    environment: { TMPDIR: "", TMP: "", TEMP: t },
    tmpdir: t,
    prefix: "",
  },
  {
    name: "all empty: /tmp",
    environment: { TMPDIR: "", TMP: "", TEMP: "" },
    tmpdir: "/tmp",
    prefix: "outpost-tmpdir-test-",
  },
  {
    name: "PREFIX alone is Termux's rule only: /tmp on Linux",
    environment: { PREFIX: u },
    tmpdir: "/tmp",
    prefix: "outpost-tmpdir-test-",
  },
];

describe.runIf(process.platform === "linux")(
  "the temp directory follows the environment the agent started in (T1)",
  () => {
    for (const row of rows) {
      it(row.name, async () => {
        setEnvironment(row.environment);
        const local = new LocalExecutionEnv({ cwd: base });
        const reference = new NodeExecutionEnv({ cwd: base });
        const made: string[] = [];
        try {
          expect(tmpdir(), "Node's os.tmpdir()").toBe(row.tmpdir);
          // The agent reads its environment once, when it starts (at the first call, here).
          const ours = await produce(local, row.prefix);
          const theirs = await produce(reference, row.prefix);
          made.push(ours.dir, theirs.dir, dirname(ours.file), dirname(theirs.file));
          made.push(dirname(ours.spill), dirname(theirs.spill));
          const inTmp = (name: string) => literal(join(row.tmpdir, name));
          const shapes = {
            // join(tmpdir, prefix) + mkdtemp's six characters (T2): "" keeps join's trailing slash, if any.
            dir: new RegExp(`^${literal(join(row.tmpdir, row.prefix))}[A-Za-z0-9]{6}$`),
            file: new RegExp(`^${inTmp("tmp-")}[A-Za-z0-9]{6}/p-${uuid}\\.s$`),
            spill: new RegExp(`^${inTmp("tmp-")}[A-Za-z0-9]{6}/pi-output-${uuid}\\.log$`),
          };
          for (const [who, produced] of [
            ["reference", theirs],
            ["LocalExecutionEnv", ours],
          ] as const) {
            expect(produced.dir, `${who}: createTempDir(${JSON.stringify(row.prefix)})`).toMatch(shapes.dir);
            expect(produced.file, `${who}: createTempFile`).toMatch(shapes.file);
            expect(produced.spill, `${who}: the spill file`).toMatch(shapes.spill);
          }
        } finally {
          await local.close();
          await Promise.all(made.map((path) => rm(path, { recursive: true, force: true })));
        }
      });
    }
  },
);
