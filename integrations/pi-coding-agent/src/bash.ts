/**
 * pi's `BashOperations` over an Outpost env, and pi's bash tool with its full-output file moved to the target, so
 * that the model's follow-up `read` of "Full output: <path>" finds it there.
 */
import { createReadStream } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import {
  type BashOperations,
  type BashToolDetails,
  type BashToolOptions,
  createBashToolDefinition,
  getAgentDir,
  type ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import type { OutpostEnv } from "./env.js";
import { contextOf } from "./errno.js";

/** Bytes moved per `appendFile` when the full-output file is copied to the target. */
const COPY_CHUNK_BYTES = 4 * 1024 * 1024;

/** Where pi keeps the tools it manages for the local machine; it prepends this directory to every PATH. */
function piBinDir(): string {
  return join(getAgentDir(), "bin");
}

/**
 * The variables of pi's command environment that differ from this process's: only these are sent, layered over
 * the target's own environment (this machine's HOME or PATH mean nothing there). pi's local tool directory, which
 * it puts first on PATH, is left out for the same reason. A variable pi removed cannot be removed on the target.
 */
export function changedVariables(vars: NodeJS.ProcessEnv | undefined): Record<string, string> | undefined {
  if (vars === undefined) return undefined;
  const changed: Record<string, string> = {};
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined || process.env[name] === value) continue;
    const own = process.env[name];
    if (name.toLowerCase() === "path" && (value === `${piBinDir()}${delimiter}${own ?? ""}` || value === piBinDir())) {
      continue;
    }
    changed[name] = value;
  }
  return Object.keys(changed).length > 0 ? changed : undefined;
}

/**
 * `BashOperations` for pi's bash tool: the command runs on the env's machine in `cwd`. Output reaches pi as bytes;
 * a timeout of 0 or less means none (pi's convention); a stop by the signal rejects with `"aborted"` and a
 * timeout with `"timeout:<seconds>"`, the messages pi's tool turns into "Command aborted" / "Command timed out".
 */
export function createOutpostBashOperations(env: OutpostEnv): BashOperations {
  return {
    exec: async (command, cwd, { onData, signal, timeout, env: vars }) => {
      const result = await env.exec(
        command,
        {
          cwd,
          env: changedVariables(vars),
          timeout: timeout !== undefined && timeout > 0 ? timeout : undefined,
          onOutput: (text) => onData(Buffer.from(text, "utf8")),
        },
        contextOf(signal),
      );
      if (result.ok) return { exitCode: result.value.exitCode };
      if (result.error.code === "aborted") throw new Error("aborted");
      if (result.error.code === "timeout") throw new Error(`timeout:${timeout}`);
      throw new Error(result.error.message);
    },
  };
}

/** The local full-output files pi's bash tool writes: `<tmpdir>/pi-bash-<16 hex>.log`. */
function localOutputPattern(): RegExp {
  const dir = tmpdir().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`${dir}/pi-bash-[0-9a-f]{16}\\.log`, "g");
}

/** Copies a local full-output file into a new temp file on the target, removes the local one, returns the new path. */
async function moveToTarget(env: OutpostEnv, localPath: string): Promise<string | undefined> {
  const context = contextOf(undefined);
  const created = await env.createTempFile({ prefix: "pi-bash-", suffix: ".log" }, context);
  if (!created.ok) return undefined;
  for await (const chunk of createReadStream(localPath, { highWaterMark: COPY_CHUNK_BYTES })) {
    const appended = await env.appendFile(created.value, chunk as Buffer, context);
    if (!appended.ok) return undefined;
  }
  await unlink(localPath).catch(() => undefined);
  return created.value;
}

/** Moves every local full-output file a text names to the target and names the target's copy instead. */
async function relocateIn(env: OutpostEnv, text: string, moved: Map<string, string>): Promise<string> {
  for (const localPath of new Set(text.match(localOutputPattern()) ?? [])) {
    if (!moved.has(localPath)) {
      const targetPath = await moveToTarget(env, localPath);
      if (targetPath === undefined) continue;
      moved.set(localPath, targetPath);
    }
    text = text.split(localPath).join(moved.get(localPath)!);
  }
  return text;
}

type BashDefinition = ToolDefinition<
  ReturnType<typeof createBashToolDefinition>["parameters"],
  BashToolDetails | undefined
>;

/**
 * pi's bash tool running on the env's machine. Its full-output file ("Full output: …" in the result, `details.
 * fullOutputPath`) is written on the target, in a temp file of the env; partial updates omit the path until the
 * command has ended, since the file is only copied then.
 */
export function createOutpostBashToolDefinition(
  env: OutpostEnv,
  cwd: string,
  options: Omit<BashToolOptions, "operations"> = {},
): ReturnType<typeof createBashToolDefinition> {
  const inner = createBashToolDefinition(cwd, { ...options, operations: createOutpostBashOperations(env) });
  const execute: BashDefinition["execute"] = async (toolCallId, params, signal, onUpdate, ctx) => {
    const forwardUpdate: typeof onUpdate =
      onUpdate &&
      ((partial) =>
        onUpdate(
          partial.details?.fullOutputPath === undefined
            ? partial
            : { ...partial, details: { ...partial.details, fullOutputPath: undefined } },
        ));
    const moved = new Map<string, string>();
    let result: Awaited<ReturnType<BashDefinition["execute"]>>;
    try {
      result = await inner.execute(toolCallId, params, signal, forwardUpdate, ctx);
    } catch (error) {
      if (error instanceof Error) error.message = await relocateIn(env, error.message, moved);
      throw error;
    }
    const content = [];
    for (const part of result.content) {
      content.push(part.type === "text" ? { ...part, text: await relocateIn(env, part.text, moved) } : part);
    }
    const localPath = result.details?.fullOutputPath;
    if (localPath === undefined) return { ...result, content };
    const targetPath = moved.get(localPath) ?? (await moveToTarget(env, localPath)) ?? localPath;
    return { ...result, content, details: { ...result.details, fullOutputPath: targetPath } };
  };
  return { ...inner, execute };
}
