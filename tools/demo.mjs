#!/usr/bin/env node
// Outpost's main job, end to end on this machine: an agent's tools (files, commands, watching, listing) run
// through LocalExecutionEnv, which starts the Outpost agent as a child process and talks protocol 1 to it.
// Each step prints the call it makes, then what came back, in words a reader needs no source for.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalExecutionEnv } from "@outpost/sdk";

const context = { abortSignal: undefined };

/**
 * Prints a step: the call, then its result as `render` words it (an error as its class, code and message).
 * `expected` is "ok" or the error code the step must fail with; any other outcome is marked and makes the demo
 * exit 1 (CI runs it: .ci/run).
 */
function show(call, result, { expected = "ok", render = (value) => JSON.stringify(value) } = {}) {
  const outcome = result.ok ? "ok" : result.error.code;
  const text = result.ok
    ? render(result.value)
    : `failed as expected: ${result.error.name} [${result.error.code}] ${result.error.message}`;
  const mark = outcome === expected ? "" : `   <- UNEXPECTED (expected ${expected})`;
  if (mark !== "") process.exitCode = 1;
  console.log(`> ${call}`);
  for (const line of `${text}${mark}`.split("\n")) console.log(`  ${line}`);
  return result;
}

/** Output lines of `exec`, collected by its onOutput handler, labelled with their stream. */
function collector() {
  const lines = [];
  return {
    onOutput: (text, _context, { stream }) => {
      for (const line of text.split("\n")) if (line !== "") lines.push(`${stream}: ${line}`);
    },
    render: ({ exitCode }) => [...lines, `exit code ${exitCode}`].join("\n"),
  };
}

const written = () => "written";
const root = await mkdtemp(join(tmpdir(), "outpost-demo-"));
const env = new LocalExecutionEnv({ cwd: root });
try {
  const info = await env.connection.info();
  console.log(`Outpost agent ${info.version} (pid ${info.pid}) on ${info.os}/${info.arch}`);
  console.log(`const env = new LocalExecutionEnv({ cwd: "${root}" }); every call below also takes a context\n`);

  const todo = "# Todo\n- ship outpost\n- write docs\n";
  show(`env.writeFile("notes/todo.md", ${JSON.stringify(todo)})`, await env.writeFile("notes/todo.md", todo, context), {
    render: written,
  });
  show(
    'env.appendFile("notes/todo.md", "- celebrate\\n")',
    await env.appendFile("notes/todo.md", "- celebrate\n", context),
    { render: () => "appended" },
  );
  show(
    'env.readTextLines("notes/todo.md", { maxLines: 3 })',
    await env.readTextLines("notes/todo.md", { maxLines: 3 }, context),
    { render: (lines) => `${lines.length} lines: ${JSON.stringify(lines)}` },
  );
  show('env.fileInfo("notes/todo.md")', await env.fileInfo("notes/todo.md", context), {
    render: (file) => `${file.kind}, ${file.size} bytes, modified ${new Date(file.mtimeMs).toISOString()}`,
  });
  show('env.listDir("notes")', await env.listDir("notes", context), {
    render: (entries) => entries.map((entry) => `${entry.name} (${entry.kind})`).join(", "),
  });
  show('env.exists("missing.txt")', await env.exists("missing.txt", context), { render: String });
  show('env.readTextFile("missing.txt")', await env.readTextFile("missing.txt", context), { expected: "not_found" });

  const shell = collector();
  show(
    'env.exec("grep -c -- - notes/todo.md; echo to-stderr >&2", { onOutput })',
    await env.exec("grep -c -- - notes/todo.md; echo to-stderr >&2", { onOutput: shell.onOutput }, context),
    { render: shell.render },
  );
  const argv = collector();
  show(
    'env.exec(["ls", "-1", "notes"], { onOutput })   (an argv: no shell)',
    await env.exec(["ls", "-1", "notes"], { onOutput: argv.onOutput }, context),
    { render: argv.render },
  );
  show('env.exec("sleep 5", { timeout: 0.2 })', await env.exec("sleep 5", { timeout: 0.2 }, context), {
    expected: "timeout",
  });

  // A project's files as an agent's find/grep tools want them: .gitignore honoured, .git never listed.
  await env.writeFile(".gitignore", "build/\n", context);
  await env.writeFile("build/out.o", "x", context);
  await env.writeFile("src/main.ts", "export {};\n", context);
  show(
    'env.listFiles(".")   (after writing .gitignore "build/", build/out.o, src/main.ts)',
    await env.listFiles(".", undefined, context),
    {
      render: ({ paths, truncated }) => `${paths.join(", ")}${truncated ? " (truncated)" : ""}; build/out.o left out`,
    },
  );

  // A watcher reports what changes below it; the first report comes once a write lands.
  let reportChange;
  const changed = new Promise((resolve) => {
    reportChange = resolve;
  });
  const watchCall = 'env.watch([{ path: "notes", recursive: true }], onChange), then writeFile("notes/idea.md")';
  const watcher = await env.watch([{ path: "notes", recursive: true }], (change) => reportChange(change), context);
  if (watcher.ok) {
    await env.writeFile("notes/idea.md", "watch me\n", context);
    const timeout = new Promise((r) => setTimeout(() => r(undefined), 3000));
    const change = await Promise.race([changed, timeout]);
    show(
      watchCall,
      change === undefined
        ? { ok: false, error: { name: "Error", code: "no_change", message: "none in 3 s" } }
        : { ok: true, value: change },
      {
        render: (reported) =>
          `${watcher.value.mode} watcher reported: ${reported.paths.map((path) => path.slice(root.length + 1)).join(", ")}`,
      },
    );
    await watcher.value.close(context);
  } else show(watchCall, watcher);
} finally {
  await env.cleanup(context);
  await env.close();
  await rm(root, { recursive: true, force: true });
}
