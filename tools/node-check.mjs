// Prints one line and exits 1 when this Node is older than Outpost supports (the `engines` of the root
// package.json: Node 22 from 22.19, and 24), for the Makefile and .ci/run; prints nothing otherwise.
// Plain JavaScript that any old Node parses, so the message reaches whoever runs it.
import { readFileSync } from "node:fs";

const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node;
const minimum = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(engines);
if (minimum === null) {
  console.log(`tools/node-check.mjs: the root package.json's engines.node (${engines}) is not ">=X.Y.Z"`);
  process.exit(1);
}
const [major, minor] = process.versions.node.split(".").map(Number);
const [wantMajor, wantMinor] = [Number(minimum[1]), Number(minimum[2])];
if (major < wantMajor || (major === wantMajor && minor < wantMinor)) {
  console.log(
    `outpost needs Node ${wantMajor}.${wantMinor} or later (22 LTS or 24 LTS); this is Node ${process.versions.node} at ${process.execPath}: put a newer node first on PATH`,
  );
  process.exit(1);
}
