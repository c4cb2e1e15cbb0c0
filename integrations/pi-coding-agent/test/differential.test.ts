/**
 * pi's own local tools vs the same tools through an Outpost env (LocalExecutionEnv: the real agent on this
 * machine) on the fixed scenario: every case's outcome — text and details returned to the model, error messages,
 * resulting files, bash's full-output file — must be identical, or be exactly the accepted difference listed.
 */
import "./pi-setup.js";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExecutionEnv, LocalExecutionEnv } from "@outpost/sdk";
import { NodeExecutionEnv } from "@outpost/spec/reference";
import { expect } from "vitest";
import { createOutpostToolDefinitions } from "../src/index.js";
import { findCommand } from "../src/target-files.js";
import { CASES, ENV_GREP_CASES } from "./cases.js";
import { defineDifferential, TARGET_FULL_OUTPUT } from "./differential.js";
import { buildScenario } from "./scenario.js";

/** An Outpost side on this machine: the scenario in `base/name`, the env made by `makeEnv`. */
function localSide(
  base: string,
  name: string,
  makeEnv: (cwd: string) => ExecutionEnv & { close?: () => Promise<void> },
  grepBackend?: "env" | "ripgrep",
) {
  const root = join(base, name);
  mkdirSync(root);
  buildScenario(root);
  const env = makeEnv(root);
  return {
    side: {
      root,
      definitions: createOutpostToolDefinitions(env, grepBackend ? { grep: { backend: grepBackend } } : {}),
      readFile: async (path: string) => {
        const text = await env.readTextFile(path, { abortSignal: undefined });
        return text.ok ? text.value : null;
      },
      fullOutputPattern: TARGET_FULL_OUTPUT,
    },
    close: async () => {
      await env.cleanup({ abortSignal: undefined });
      await env.close?.();
    },
  };
}

const agentEnv = (cwd: string) => new LocalExecutionEnv({ cwd });
// Durable's NodeExecutionEnv as the spec's reference implements it: an env without `listFiles`, so find and grep's
// own listing go through `fd` on the target.
const referenceEnv = (cwd: string) => new NodeExecutionEnv({ cwd });

defineDifferential({
  title: "pi differential (LocalExecutionEnv)",
  setup: async (base) => localSide(base, "outpost", agentEnv),
});

defineDifferential({
  title: "pi differential, grep through ripgrep on the target (not the agent's searchFiles)",
  cases: CASES.filter((toolCase) => toolCase.tool === "grep"),
  setup: async (base) => localSide(base, "outpost-rg-grep", agentEnv, "ripgrep"),
});

defineDifferential({
  title: "pi differential, grep searching through the env (no ripgrep)",
  cases: ENV_GREP_CASES,
  setup: async (base) => localSide(base, "outpost-env-grep", agentEnv, "env"),
});

defineDifferential({
  title: "pi differential (reference NodeExecutionEnv, no listFiles)",
  setup: async (base) => localSide(base, "reference", referenceEnv),
});

defineDifferential({
  title: "pi differential, grep through the reference env (no ripgrep, no listFiles)",
  cases: ENV_GREP_CASES,
  setup: async (base) => localSide(base, "reference-env-grep", referenceEnv, "env"),
});

/** An env whose commands see a PATH without ripgrep, counting its `searchFiles` calls (other calls pass through). */
function withoutRipgrep(cwd: string, emptyBin: string) {
  const env = new LocalExecutionEnv({ cwd, shellEnv: { PATH: emptyBin } });
  const counted = { searchFiles: 0 };
  const proxy = new Proxy(env, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "searchFiles") {
        return (...args: Parameters<LocalExecutionEnv["searchFiles"]>) => {
          counted.searchFiles++;
          return target.searchFiles(...args);
        };
      }
      return value.bind(target);
    },
  });
  return { env: proxy, counted };
}

let emptyBin = "";
let noRipgrep: ReturnType<typeof withoutRipgrep> | undefined;

defineDifferential({
  title: "pi differential, grep on a target without ripgrep (the agent's searchFiles)",
  cases: ENV_GREP_CASES,
  setup: async (base) => {
    emptyBin = mkdtempSync(join(tmpdir(), "outpost-pi-no-rg-"));
    const side = localSide(base, "outpost-no-rg", (cwd) => {
      noRipgrep = withoutRipgrep(cwd, emptyBin);
      return noRipgrep.env;
    });
    // The target really has no ripgrep: the tool cannot have fallen back to it.
    expect(await findCommand(noRipgrep?.env as LocalExecutionEnv, ["rg"])).toBeUndefined();
    return {
      ...side,
      close: async () => {
        await side.close();
        rmSync(emptyBin, { recursive: true, force: true });
      },
    };
  },
  afterAllCases: () => {
    // Every grep case but the missing path (refused before any search) went to searchFiles.
    expect(noRipgrep?.counted.searchFiles).toBe(ENV_GREP_CASES.length - 1);
  },
});
