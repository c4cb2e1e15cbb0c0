#!/usr/bin/env node
// Outpost's main job, end to end on this machine: an agent's tools (files, commands, watching, listing) run
// through LocalExecutionEnv, which starts the Outpost agent as a child process and talks protocol 1 to it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalExecutionEnv } from "@outpost/sdk";

const context = { abortSignal: undefined };

/**
 * Prints a step's result. `expected` is "ok" or the error code the step must fail with; any other outcome is
 * marked and makes the demo exit 1 (CI runs it: .ci/run).
 */
function show(label, result, expected = "ok") {
  const value = result.ok
    ? (result.value ?? "ok")
    : `${result.error.name} ${result.error.code}: ${result.error.message}`;
  const outcome = result.ok ? "ok" : result.error.code;
  const mark = outcome === expected ? "" : `   <- UNEXPECTED (expected ${expected})`;
  if (mark !== "") process.exitCode = 1;
  console.log(`${label.padEnd(34)} ${typeof value === "string" ? value : JSON.stringify(value)}${mark}`);
  return result;
}

const root = await mkdtemp(join(tmpdir(), "outpost-demo-"));
const env = new LocalExecutionEnv({ cwd: root });
try {
  const info = await env.connection.info();
  console.log(`Outpost agent ${info.version} (pid ${info.pid}) on ${info.os}/${info.arch}, cwd ${root}\n`);

  show(
    "writeFile notes/todo.md",
    await env.writeFile("notes/todo.md", "# Todo\n- ship outpost\n- write docs\n", context),
  );
  show("appendFile notes/todo.md", await env.appendFile("notes/todo.md", "- celebrate\n", context));
  show("readTextLines notes/todo.md", await env.readTextLines("notes/todo.md", { maxLines: 3 }, context));
  show("fileInfo notes/todo.md", await env.fileInfo("notes/todo.md", context));
  show(
    "listDir notes",
    await env.listDir("notes", context).then((r) => (r.ok ? { ok: true, value: r.value.map((e) => e.name) } : r)),
  );
  show("exists missing.txt", await env.exists("missing.txt", context));
  show("readTextFile missing.txt", await env.readTextFile("missing.txt", context), "not_found");

  const chunks = [];
  show(
    "exec grep -c - notes/todo.md",
    await env.exec(
      "grep -c -- - notes/todo.md; echo to-stderr >&2",
      {
        onOutput: (text, _ctx, { stream }) => chunks.push(`${stream}: ${text.trim()}`),
      },
      context,
    ),
  );
  for (const chunk of chunks) console.log(`${"".padEnd(34)} ${chunk}`);
  show('exec ["ls", "-1", "notes"] (argv)', await env.exec(["ls", "-1", "notes"], undefined, context));
  show("exec sleep 5 with timeout 0.2 s", await env.exec("sleep 5", { timeout: 0.2 }, context), "timeout");

  // A project's files as an agent's find/grep tools want them: .gitignore honoured, .git never listed.
  await env.writeFile(".gitignore", "build/\n", context);
  await env.writeFile("build/out.o", "x", context);
  await env.writeFile("src/main.ts", "export {};\n", context);
  show("listFiles . (ignore rules kept)", await env.listFiles(".", undefined, context));

  // A watcher reports what changes below it; the first report comes once a write lands.
  let reportChange;
  const changed = new Promise((resolve) => {
    reportChange = resolve;
  });
  const watcher = await env.watch([{ path: "notes", recursive: true }], (change) => reportChange(change), context);
  if (watcher.ok) {
    await env.writeFile("notes/idea.md", "watch me\n", context);
    const timeout = new Promise((r) => setTimeout(() => r(undefined), 3000));
    const change = await Promise.race([changed, timeout]);
    show(
      `watch notes (${watcher.value.mode})`,
      change === undefined
        ? { ok: false, error: { name: "Error", code: "no_change", message: "none in 3 s" } }
        : { ok: true, value: change },
    );
    await watcher.value.close(context);
  } else show("watch notes", watcher);
} finally {
  await env.cleanup(context);
  await env.close();
  await rm(root, { recursive: true, force: true });
}
