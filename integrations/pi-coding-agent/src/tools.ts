/** All seven of pi's coding tools on one Outpost env: the one-liners. */
import { isAbsolute } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type AgentToolResult,
  type BashToolOptions,
  createEditToolDefinition,
  createFindToolDefinition,
  createLsToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
  type ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { createOutpostBashToolDefinition } from "./bash.js";
import { createOutpostEditOperations } from "./edit.js";
import type { OutpostEnv } from "./env.js";
import { createOutpostFindOperations } from "./find.js";
import { createOutpostGrepToolDefinition, type OutpostGrepOptions } from "./grep.js";
import { createOutpostLsOperations } from "./ls.js";
import { createOutpostReadOperations } from "./read.js";
import { createOutpostWriteOperations } from "./write.js";

/** Options of {@link createOutpostToolDefinitions} and {@link createOutpostTools}. */
export interface OutpostToolsOptions {
  /** The tools' working directory on the target, absolute (default: the env's `cwd`). */
  cwd?: string;
  /** Whether read shrinks large images before sending them (pi's `autoResizeImages`, default true). */
  autoResizeImages?: boolean;
  /** pi's bash options other than `operations` (`commandPrefix`, `spawnHook`). */
  bash?: Omit<BashToolOptions, "operations" | "shellPath">;
  /** grep's options (which search backend to use). */
  grep?: OutpostGrepOptions;
}

/** A tool definition of any of the seven (pi's own type, parameters and details left open). */
// biome-ignore lint/suspicious/noExplicitAny: pi's own ToolDef type, whose parameters differ per tool
export type OutpostToolDefinition = ToolDefinition<TSchema, any>;

function toolCwd(env: OutpostEnv, options: OutpostToolsOptions): string {
  const cwd = options.cwd ?? env.cwd;
  if (!isAbsolute(cwd)) {
    throw new TypeError(`pi's tools need an absolute cwd on the target; got "${cwd}" (pass options.cwd)`);
  }
  return cwd;
}

/**
 * pi's seven coding tools (read, bash, edit, write, grep, find, ls) as tool definitions that run on the env's
 * machine, for `createAgentSession({ customTools, tools: [...] })`: they replace pi's built-ins of the same names.
 */
export function createOutpostToolDefinitions(
  env: OutpostEnv,
  options: OutpostToolsOptions = {},
): OutpostToolDefinition[] {
  const cwd = toolCwd(env, options);
  const definitions = [
    createReadToolDefinition(cwd, {
      operations: createOutpostReadOperations(env),
      autoResizeImages: options.autoResizeImages,
    }),
    createOutpostBashToolDefinition(env, cwd, options.bash),
    createEditToolDefinition(cwd, { operations: createOutpostEditOperations(env) }),
    createWriteToolDefinition(cwd, { operations: createOutpostWriteOperations(env) }),
    createOutpostGrepToolDefinition(env, cwd, options.grep),
    createFindToolDefinition(cwd, { operations: createOutpostFindOperations(env) }),
    createLsToolDefinition(cwd, { operations: createOutpostLsOperations(env) }),
  ];
  return definitions as unknown as OutpostToolDefinition[];
}

/** pi's seven coding tools as agent tools (pi-agent-core's `AgentTool`) that run on the env's machine. */
// biome-ignore lint/suspicious/noExplicitAny: pi-agent-core's own tool type, parameters differ per tool
export function createOutpostTools(env: OutpostEnv, options: OutpostToolsOptions = {}): AgentTool<any>[] {
  return createOutpostToolDefinitions(env, options).map((definition) => ({
    name: definition.name,
    label: definition.label,
    description: definition.description,
    parameters: definition.parameters,
    prepareArguments: definition.prepareArguments,
    executionMode: definition.executionMode,
    execute: (toolCallId, params, signal, onUpdate) =>
      definition.execute(toolCallId, params, signal, onUpdate, undefined as never) as Promise<AgentToolResult<unknown>>,
  }));
}
