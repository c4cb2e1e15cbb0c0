// Run from a directory where @outpost/sdk was installed from its packed tarball (tools/package-test.sh): every
// platform's agent is where packagedAgent() looks and matches the manifest's SHA-256, and LocalExecutionEnv works
// (file operations and a command) with nothing but Node on this machine; the `@outpost/sdk/protocol` subpath
// resolves and works (a raw request, a lost connection recognised, the stream decoder).
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, LocalExecutionEnv, packagedAgent, readManifest } from "@outpost/sdk";
import { isConnectionLost, RemoteError, StreamDecoder } from "@outpost/sdk/protocol";

function check(condition, what) {
  if (!condition) throw new Error(`package smoke test: ${what}`);
}

const manifest = readManifest();
check(manifest !== undefined, "the package has no bin/manifest.json");
for (const platform of ["linux", "darwin", "windows"]) {
  for (const arch of ["x64", "arm64"]) {
    const name = `${platform}-${arch}`;
    const path = packagedAgent(platform, arch);
    const entry = manifest.agents[name];
    check(entry !== undefined, `the manifest lists no ${name} agent`);
    const sha256 = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
    check(sha256 === entry.sha256, `${name}: SHA-256 ${sha256} is not the manifest's ${entry.sha256}`);
  }
}

const context = { abortSignal: undefined };
const dir = await mkdtemp(join(tmpdir(), "outpost-package-smoke-"));
const env = new LocalExecutionEnv({ cwd: dir });
try {
  const written = await env.writeFile("notes/a.txt", "one\n", context);
  check(written.ok, `writeFile: ${JSON.stringify(written)}`);
  const appended = await env.appendFile("notes/a.txt", "two\n", context);
  check(appended.ok, `appendFile: ${JSON.stringify(appended)}`);
  const text = await env.readTextFile("notes/a.txt", context);
  check(text.ok && text.value === "one\ntwo\n", `readTextFile: ${JSON.stringify(text)}`);
  const listed = await env.listDir("notes", context);
  check(listed.ok && listed.value.map((info) => info.name).join() === "a.txt", `listDir: ${JSON.stringify(listed)}`);
  const missing = await env.readTextFile("missing", context);
  check(
    !missing.ok && missing.error.code === "not_found",
    `readTextFile of a missing file: ${JSON.stringify(missing)}`,
  );
  let output = "";
  const ran = await env.exec("cat notes/a.txt; echo done", { onOutput: (chunk) => (output += chunk) }, context);
  check(ran.ok && ran.value.exitCode === 0, `exec: ${JSON.stringify(ran)}`);
  check(output === "one\ntwo\ndone\n", `exec output: ${JSON.stringify(output)}`);
  // The protocol subpath: a raw request on the env's connection.
  const stat = await env.connection.request("lstat", { path: join(dir, "notes", "a.txt") });
  const info = stat.json.info ?? stat.json;
  check(info.kind === "file" && info.size === 8, `raw lstat: ${JSON.stringify(stat.json)}`);
} finally {
  await env.close();
  await rm(dir, { recursive: true, force: true });
}
const decoder = new StreamDecoder();
const euro = Buffer.from("\ufeff€", "utf8");
const decoded = decoder.decode(euro.subarray(0, 4)) + decoder.decode(euro.subarray(4)) + decoder.decode();
check(decoded === "€", `StreamDecoder: ${JSON.stringify(decoded)}`);
const nowhere = new Connection({ command: [join(dir, "no-such-agent")] });
const failure = await nowhere.info().then(
  () => undefined,
  (error) => error,
);
check(
  failure instanceof RemoteError && isConnectionLost(failure) && failure.code === "spawn_error",
  `a connection to a missing agent: ${failure}`,
);
await nowhere.close();
console.log("package smoke test: ok");
