/**
 * The remote case: the agent runs in its own mount namespace, where the tools' directory is a bind mount of the
 * scenario and the temp directory is a private tmpfs, while this machine's disk holds a decoy tree at the same path.
 * Every tool must produce what pi's local tools produce on the scenario — so every tool read and wrote the target —
 * no outcome may show the decoy, the decoy must be untouched, and bash's full-output file must exist on the target
 * and not here.
 */
import "./pi-setup.js";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { createOutpostToolDefinitions } from "../src/index.js";
import { defineDifferential, TARGET_FULL_OUTPUT } from "./differential.js";
import { namespaceEnv } from "./namespace.js";
import { buildDecoy, buildScenario } from "./scenario.js";

/** Every regular file below `root` with its contents. */
function snapshot(root: string, prefix = ""): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(join(root, prefix))) {
    const path = join(prefix, name);
    if (statSync(join(root, path)).isDirectory()) Object.assign(files, snapshot(root, path));
    else files[path] = readFileSync(join(root, path), "utf8");
  }
  return files;
}

let decoyRoot = "";
let targetRoot = "";
let decoyBefore: Record<string, string> = {};
const fullOutputs: { path: string; onTarget: boolean }[] = [];

defineDifferential({
  title: "pi differential, remote (agent in its own mount namespace)",
  setup: async (base) => {
    targetRoot = join(base, "target");
    decoyRoot = join(base, "remote");
    const targetTmp = join(base, "target-tmp");
    for (const dir of [targetRoot, decoyRoot, targetTmp]) mkdirSync(dir);
    buildScenario(targetRoot);
    buildDecoy(decoyRoot);
    decoyBefore = snapshot(decoyRoot);
    const { env, close } = namespaceEnv(targetRoot, decoyRoot, targetTmp);
    return {
      side: {
        root: decoyRoot,
        definitions: createOutpostToolDefinitions(env),
        readFile: async (path: string) => {
          const text = await env.readTextFile(path, { abortSignal: undefined });
          if (TARGET_FULL_OUTPUT.test(path)) fullOutputs.push({ path, onTarget: text.ok });
          TARGET_FULL_OUTPUT.lastIndex = 0;
          return text.ok ? text.value : null;
        },
        fullOutputPattern: TARGET_FULL_OUTPUT,
      },
      close,
    };
  },
  afterEachCase: (outcome) => {
    expect(JSON.stringify(outcome)).not.toContain("DECOY");
  },
  afterAllCases: () => {
    // Nothing was written here: the decoy is as it was, and the files the tools made are in the target tree.
    expect(snapshot(decoyRoot)).toEqual(decoyBefore);
    expect(existsSync(join(targetRoot, "new/dir/file.txt"))).toBe(true);
    expect(readFileSync(join(targetRoot, "made.txt"), "utf8")).toBe("made\n");
    // bash's full-output files are on the target (its private tmpfs), not on this machine.
    expect(fullOutputs.length).toBeGreaterThanOrEqual(2);
    for (const { path, onTarget } of fullOutputs) {
      expect(onTarget).toBe(true);
      expect(existsSync(path)).toBe(false);
    }
  },
});
