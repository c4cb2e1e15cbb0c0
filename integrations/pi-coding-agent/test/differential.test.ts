/**
 * pi's own local tools vs the same tools through an Outpost env (LocalExecutionEnv: the real agent on this
 * machine) on the fixed scenario: every case's outcome — text and details returned to the model, error messages,
 * resulting files, bash's full-output file — must be identical, or be exactly the accepted difference listed.
 */
import "./pi-setup.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { LocalExecutionEnv } from "@outpost/sdk";
import { createOutpostToolDefinitions } from "../src/index.js";
import { CASES } from "./cases.js";
import { defineDifferential, TARGET_FULL_OUTPUT } from "./differential.js";
import { buildScenario } from "./scenario.js";

function localSide(base: string, name: string, grepBackend?: "env") {
  const root = join(base, name);
  mkdirSync(root);
  buildScenario(root);
  const env = new LocalExecutionEnv({ cwd: root });
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
    close: () => env.close(),
  };
}

defineDifferential({
  title: "pi differential (LocalExecutionEnv)",
  setup: async (base) => localSide(base, "outpost"),
});

defineDifferential({
  title: "pi differential, grep searching through the env (no ripgrep)",
  cases: CASES.filter((toolCase) => toolCase.tool === "grep"),
  setup: async (base) => localSide(base, "outpost-env-grep", "env"),
});
