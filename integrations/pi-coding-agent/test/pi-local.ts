/** pi's own seven tools with their default (local) operations: the oracle of the differential tests. */
import {
  createBashToolDefinition,
  createEditToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createLsToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
} from "@mariozechner/pi-coding-agent";
import type { OutpostToolDefinition } from "../src/index.js";

/** pi's built-in tools working on this machine's disk in `cwd`. */
export function piLocalDefinitions(cwd: string): OutpostToolDefinition[] {
  return [
    createReadToolDefinition(cwd),
    createBashToolDefinition(cwd),
    createEditToolDefinition(cwd),
    createWriteToolDefinition(cwd),
    createGrepToolDefinition(cwd),
    createFindToolDefinition(cwd),
    createLsToolDefinition(cwd),
  ] as unknown as OutpostToolDefinition[];
}
