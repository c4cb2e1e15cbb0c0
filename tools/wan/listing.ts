/**
 * The WAN bench's tree rows (tools/wan/bench.ts): on one generated tree in the server's home (the listFiles and
 * searchFiles benches' tree, tools/bench-list-files.ts, filled with their code-like text), per profile:
 * - `listFiles` of the whole tree through the connected env against `ssh host fd` (`fdfind --type f --hidden
 *   --exclude .git`, the same rules: .gitignore honoured, hidden files listed, .git left out) and `ssh host find`
 *   (`find -type f`, no ignore rules: more paths);
 * - `searchFiles` of a rare literal (one file in 5,000; the time is the walk and the scan, not the output) against
 *   `ssh host rg` with the same rules.
 * The anchors run as an agent without Outpost would run them: a fresh `ssh` per call, so each includes a connection
 * set-up; `ssh host true` is measured in the same rounds and each anchor is also given with its median taken off.
 * Candidates interleave round by round (each round in a rotated order); medians with the spread.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { SshExecutionEnv } from "../../sdk/src/index.js";
import { countLines, makeTree, which } from "../bench-list-files.js";
import { content } from "../bench-search-files.js";
import { median } from "./measure.js";
import type { RigServer } from "./server.js";

const run = promisify(execFile);
const none = { abortSignal: undefined };
const RARE = "RARE_NEEDLE_4711";

/** A word for the remote POSIX shell. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The tree's place and size, made once per bench run. */
export interface Tree {
  root: string;
  files: number;
}

/** Writes the tree (`files` files) under `dir` on the server's side (one file system: the same machine). */
export async function makeBenchTree(dir: string, files: number): Promise<Tree> {
  const root = join(dir, "tree");
  await makeTree(root, files, content);
  return { root, files };
}

/** The rows for the current profile. */
export async function listingRows(
  server: RigServer,
  env: SshExecutionEnv,
  tree: Tree,
  rounds: number,
): Promise<string[]> {
  const fd = await which("fdfind", "fd");
  const rg = await which("rg");
  if (fd === undefined || rg === undefined) throw new Error("the tree rows need fd (apt-get install fd-find) and rg");
  const ssh = (command: string) => countLines("ssh", [...server.sshArgs, server.host, command], "/");
  const listed = async () => {
    let count = 0;
    const result = await env.listFiles(tree.root, { onPage: (paths) => (count += paths.length) }, none);
    if (!result.ok) throw result.error;
    return count;
  };
  const searched = async () => {
    let count = 0;
    const result = await env.searchFiles(tree.root, RARE, { onPage: (matches) => (count += matches.length) }, none);
    if (!result.ok) throw result.error;
    return count;
  };
  const root = quote(tree.root);
  const candidates: { name: string; anchor: boolean; body: () => Promise<number> }[] = [
    { name: "listFiles", anchor: false, body: listed },
    {
      name: "ssh host fd",
      anchor: true,
      body: () => ssh(`${fd} --type f --hidden --exclude .git . ${root}`),
    },
    { name: "ssh host find", anchor: true, body: () => ssh(`find ${root} -type f`) },
    { name: `searchFiles ${RARE}`, anchor: false, body: searched },
    {
      name: "ssh host rg",
      anchor: true,
      body: () => ssh(`${rg} --no-config --hidden --no-require-git --glob '!.git' -n -e ${RARE} ${root}`),
    },
  ];
  const times = new Map<string, number[]>();
  const counts = new Map<string, number>();
  const connects: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let started = performance.now();
    await run("ssh", [...server.sshArgs, server.host, "true"]);
    connects.push(performance.now() - started);
    for (let k = 0; k < candidates.length; k++) {
      const candidate = candidates[(k + round) % candidates.length];
      started = performance.now();
      const count = await candidate.body();
      times.set(candidate.name, [...(times.get(candidate.name) ?? []), performance.now() - started]);
      const first = counts.get(candidate.name);
      if (first !== undefined && first !== count) throw new Error(`${candidate.name}: ${count}, earlier ${first}`);
      counts.set(candidate.name, count);
    }
  }
  const connect = median(connects);
  const ms = (name: string) => median(times.get(name) ?? [Number.NaN]);
  const row = (name: string, versus?: string) => {
    const samples = times.get(name) ?? [];
    const spread = `${Math.min(...samples).toFixed(0)}–${Math.max(...samples).toFixed(0)}`;
    const candidate = candidates.find((c) => c.name === name);
    const less = candidate?.anchor ? `, ${(ms(name) - connect).toFixed(0)} ms less the connection` : "";
    const ratio = versus === undefined ? "" : `  ${(ms(name) / ms(versus)).toFixed(2)}× ${versus}`;
    return `  ${name.padEnd(28)} ${ms(name).toFixed(0).padStart(7)} ms${less}  (${counts.get(name)} lines)${ratio}  [${spread}]`;
  };
  return [
    row("listFiles", "ssh host fd"),
    row("ssh host fd"),
    row("ssh host find"),
    row(`searchFiles ${RARE}`, "ssh host rg"),
    row("ssh host rg"),
    `  (\`ssh host true\`: ${connect.toFixed(0)} ms, the median of these rounds; tree: ${tree.files.toLocaleString("en")} files)`,
  ];
}
