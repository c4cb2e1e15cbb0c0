// Run from a directory where @outpost/sdk and @outpost/pi-coding-agent were installed from their packed tarballs
// (tools/package-test.sh): pi's seven tools from `createOutpostTools` on a LocalExecutionEnv — write, read, edit,
// bash, ls, find, grep — each once, as an agent would call them.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// pi reads its agent directory when it loads and may fetch fd/ripgrep unless offline: a private directory, offline.
const agentDir = await mkdtemp(join(tmpdir(), "outpost-pi-smoke-agent-"));
process.env.PI_CODING_AGENT_DIR = agentDir;
process.env.PI_OFFLINE = "1";
const { LocalExecutionEnv } = await import("@outpost/sdk");
const { createOutpostTools } = await import("@outpost/pi-coding-agent");

function check(condition, what) {
  if (!condition) throw new Error(`pi package smoke test: ${what}`);
}

const root = await mkdtemp(join(tmpdir(), "outpost-pi-smoke-"));
const env = new LocalExecutionEnv({ cwd: root });
try {
  const tools = new Map(createOutpostTools(env).map((tool) => [tool.name, tool]));
  check(
    [...tools.keys()].sort().join() === "bash,edit,find,grep,ls,read,write",
    `createOutpostTools gave ${[...tools.keys()]}`,
  );
  let call = 0;
  const run = async (name, params) => {
    const result = await tools.get(name).execute(`call-${++call}`, params, undefined, undefined);
    return result.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("");
  };
  await run("write", { path: "src/note.txt", content: "one\ntwo\n" });
  check((await readFile(join(root, "src/note.txt"), "utf8")) === "one\ntwo\n", "write did not write the file");
  const read = await run("read", { path: "src/note.txt" });
  check(read.includes("one\ntwo"), `read: ${read}`);
  await run("edit", { path: "src/note.txt", edits: [{ oldText: "two", newText: "TWO" }] });
  check((await readFile(join(root, "src/note.txt"), "utf8")) === "one\nTWO\n", "edit did not change the file");
  const bash = await run("bash", { command: "echo from-bash; cat src/note.txt" });
  check(bash.includes("from-bash") && bash.includes("TWO"), `bash: ${bash}`);
  const ls = await run("ls", { path: "src" });
  check(ls.includes("note.txt"), `ls: ${ls}`);
  const find = await run("find", { pattern: "*.txt" });
  check(find.includes("note.txt"), `find: ${find}`);
  const grep = await run("grep", { pattern: "TWO" });
  check(grep.includes("note.txt") && grep.includes("TWO"), `grep: ${grep}`);
} finally {
  await env.close();
  await rm(root, { recursive: true, force: true });
  await rm(agentDir, { recursive: true, force: true });
}
console.log("pi package smoke test: ok (write, read, edit, bash, ls, find, grep)");
