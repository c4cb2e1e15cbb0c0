/**
 * `@outpost/pi-coding-agent`: pi's coding-agent tools on any Outpost env, so that an agent built with
 * `@mariozechner/pi-coding-agent` reads, edits, runs and searches on another machine.
 */
export {
  changedVariables,
  createOutpostBashOperations,
  createOutpostBashToolDefinition,
} from "./bash.js";
export { createOutpostEditOperations } from "./edit.js";
export type {
  ListFilesCapable,
  ListFilesOptions,
  ListFilesResult,
  OutpostEnv,
  SearchFilesCapable,
} from "./env.js";
export { type NodeStyleError, toNodeError } from "./errno.js";
export { createOutpostFindOperations } from "./find.js";
export {
  createOutpostGrepOperations,
  createOutpostGrepToolDefinition,
  type OutpostGrepOptions,
} from "./grep.js";
export type { GrepBackend } from "./grep-search.js";
export { createOutpostLsOperations } from "./ls.js";
export { createOutpostReadOperations } from "./read.js";
export {
  createOutpostToolDefinitions,
  createOutpostTools,
  type OutpostToolDefinition,
  type OutpostToolsOptions,
} from "./tools.js";
export { createOutpostWriteOperations } from "./write.js";
