#!/usr/bin/env node
// The `outpost` command: the compiled CLI (`make build` compiles cli/src to cli/dist).
import "../dist/main.js";
