#!/usr/bin/env node
// The `outpost` command: the compiled CLI (`make build` compiles cli/src to cli/dist). An older Node than Outpost
// supports gets one line instead of the SDK's error at import (a stack trace); kept equal to `engines`.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `outpost: needs Node 22.19 or later (22 LTS or 24 LTS); this is Node ${process.versions.node} [config]`,
  );
  process.exit(1);
}
await import("../dist/main.js");
