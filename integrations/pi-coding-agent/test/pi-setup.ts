/**
 * Settings pi's local tools (the oracle) need on a test machine; import this module before anything from pi, which
 * reads its agent directory when it loads.
 * - `PI_OFFLINE`: pi never downloads fd or ripgrep; the tests use Debian's (`make setup` installs them; without
 *   them every test here fails naming the missing one).
 * - A private pi agent directory whose `bin/fd` runs Debian's `fdfind`, without `--no-require-git`: Debian 12's fd
 *   (8.6) predates that flag, which pi always passes. The scenario is a git repository, where the flag changes
 *   nothing (`.gitignore` counts either way).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needTool } from "../../../tools/system-tools.js";

const fd = needTool("fd");
needTool("rg");

const agentDir = mkdtempSync(join(tmpdir(), "outpost-pi-agent-"));
mkdirSync(join(agentDir, "bin"));
const shim = join(agentDir, "bin", "fd");
writeFileSync(
  shim,
  [
    "#!/bin/sh",
    "for arg do",
    "  shift",
    '  [ "$arg" = "--no-require-git" ] && continue',
    '  set -- "$@" "$arg"',
    "done",
    `exec '${fd}' "$@"`,
    "",
  ].join("\n"),
);
chmodSync(shim, 0o755);
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = agentDir;
process.on("exit", () => rmSync(agentDir, { recursive: true, force: true }));
