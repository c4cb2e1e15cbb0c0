/**
 * The one-liners inside pi: `createAgentSession({ customTools: createOutpostToolDefinitions(env), tools })` enables
 * all seven tools and they are Outpost's, running on the target; `createOutpostTools(env)` does the same as
 * pi-agent-core tools. The target is an agent in its own mount namespace, so a local read would see other contents.
 */
import "./pi-setup.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentSession, SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutpostToolDefinitions, createOutpostTools } from "../src/index.js";
import { namespaceEnv } from "./namespace.js";

const ALL = ["read", "bash", "edit", "write", "grep", "find", "ls"];

describe("pi's session with Outpost's tools", () => {
  let base: string;
  let cwd: string;
  let ns: ReturnType<typeof namespaceEnv>;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), "outpost-pi-session-"));
    cwd = join(base, "project");
    const target = join(base, "target");
    for (const dir of [cwd, target, join(base, "tmp"), join(base, "agent")]) mkdirSync(dir);
    writeFileSync(join(cwd, "where.txt"), "local disk\n");
    writeFileSync(join(target, "where.txt"), "target machine\n");
    ns = namespaceEnv(target, cwd, join(base, "tmp"));
  });

  afterAll(async () => {
    await ns?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it("replaces all seven built-ins and runs them on the target", async () => {
    const definitions = createOutpostToolDefinitions(ns.env);
    const { session } = await createAgentSession({
      cwd,
      agentDir: join(base, "agent"),
      customTools: definitions,
      tools: ALL,
      sessionManager: SessionManager.inMemory(cwd),
    });
    expect(session.getActiveToolNames().sort()).toEqual([...ALL].sort());
    for (const definition of definitions) expect(session.getToolDefinition(definition.name)).toBe(definition);
    const read = session.agent.state.tools.find((tool) => tool.name === "read")!;
    const result = await read.execute("call-1", { path: "where.txt" }, undefined, undefined);
    expect(result.content).toEqual([{ type: "text", text: "target machine\n" }]);
  });

  it("gives the same tools as pi-agent-core tools", async () => {
    const tools = createOutpostTools(ns.env);
    expect(tools.map((tool) => tool.name)).toEqual(ALL);
    const grep = tools.find((tool) => tool.name === "grep")!;
    const found = await grep.execute("call-2", { pattern: "machine|disk" }, undefined, undefined);
    expect(found.content).toEqual([{ type: "text", text: "where.txt:1: target machine" }]);
    const bash = tools.find((tool) => tool.name === "bash")!;
    const ran = await bash.execute("call-3", { command: "cat where.txt" }, undefined, undefined);
    expect(ran.content).toEqual([{ type: "text", text: "target machine\n" }]);
  });

  it("refuses a relative cwd, which pi would resolve against this process's directory", () => {
    expect(() => createOutpostToolDefinitions(ns.env, { cwd: "project" })).toThrow(/absolute cwd/);
  });
});
