#!/usr/bin/env bash
# The npm packages as a user installs them: packs @outpost/sdk (with every `make dist` agent and the manifest, which
# `make test-package` builds first), @outpost/cli and @outpost/pi-coding-agent, installs the three tarballs into an
# empty directory (npm adds the integration's peers, pi's own packages), and there, with no Go on PATH:
# - runs tools/package-smoke.mjs (the SDK), the installed `outpost` command, and tools/package-pi-smoke.mjs (pi's
#   tools from createOutpostTools on a LocalExecutionEnv);
# - compiles a strict TypeScript consumer of the SDK's and the integration's types without skipLibCheck, with no
#   @types but the @types/node it installs itself, so a published .d.ts that needs another package's types (ssh2's,
#   say) fails here.
# Prints the sizes and the time each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
SECONDS=0
step() { echo "package-test: $1 (${SECONDS} s)"; }
fail() { echo "package-test: $1" >&2; exit 1; }

for name in linux-x64 linux-arm64 darwin-x64 darwin-arm64 windows-x64 windows-arm64; do
  ls sdk/bin/"$name"/outpost* >/dev/null 2>&1 || fail "no sdk/bin/$name agent; run make dist"
done
for built in sdk/dist/index.js cli/dist/main.js integrations/pi-coding-agent/dist/index.js; do
  [ -f "$built" ] || fail "no $built; run make build"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/outpost-package-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/pack" "$work/app"
npm pack -w @outpost/sdk -w @outpost/cli -w @outpost/pi-coding-agent --pack-destination "$work/pack" --silent >/dev/null
sdk_tarball=$(ls "$work/pack"/outpost-sdk-*.tgz)
cli_tarball=$(ls "$work/pack"/outpost-cli-*.tgz)
pi_tarball=$(ls "$work/pack"/outpost-pi-coding-agent-*.tgz)
has_members() { # tarball member...
  local tarball=$1 members
  shift
  members=$(tar -tzf "$tarball")
  for member in "$@"; do
    grep -qx "package/$member" <<<"$members" || fail "$member is not in $(basename "$tarball")"
  done
}
has_members "$sdk_tarball" README.md LICENSE bin/manifest.json dist/index.js dist/protocol.js dist/protocol.d.ts \
  dist/index.d.ts.map src/index.ts
has_members "$cli_tarball" README.md LICENSE bin/outpost.mjs dist/main.js
has_members "$pi_tarball" README.md LICENSE dist/index.js dist/index.d.ts
step "packed @outpost/sdk, @outpost/cli, @outpost/pi-coding-agent"

cd "$work/app"
echo '{ "name": "outpost-package-test", "private": true, "type": "module" }' >package.json
# One install of the three, as a user's `npm install @outpost/sdk @outpost/cli @outpost/pi-coding-agent`: the CLI's
# and the integration's @outpost/sdk is the SDK's tarball. @types/node is the consumer's own choice, for its
# TypeScript below (the version the checkout uses).
types_node=$(node -p 'require(process.argv[1]).version' "$repo/node_modules/@types/node/package.json")
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$sdk_tarball" "$cli_tarball" "$pi_tarball" \
  >/dev/null
npm install --no-audit --no-fund --prefer-offline --loglevel=error --save-dev "@types/node@$types_node" >/dev/null
[ ! -e node_modules/@types/ssh2 ] || fail "@types/ssh2 came with the packages"
[ "$(node -p 'require("./node_modules/@outpost/cli/node_modules/@outpost/sdk/package.json").version' 2>/dev/null)" = "" ] ||
  fail "@outpost/cli got an @outpost/sdk of its own, not the tarball's"
step "installed"
cp "$repo/tools/package-smoke.mjs" "$repo/tools/package-pi-smoke.mjs" .

# Only Node and the system's tools: no Go, no checkout agent.
node_dir=$(dirname "$(command -v node)")
bare_path="$node_dir:/usr/bin:/bin"
if PATH=$bare_path command -v go >/dev/null; then
  fail "go is still on PATH ($bare_path)"
fi
bare() { env -u OUTPOST_AGENT PATH="$bare_path" "$@"; }
bare node package-smoke.mjs
step "SDK smoke test passed"

# The installed CLI, run as a user runs it (node_modules/.bin/outpost, what `npx @outpost/cli` runs).
# (Captured first: `outpost … | grep -q` would end outpost by SIGPIPE, as it should, and fail the pipeline.)
help=$(bare node_modules/.bin/outpost --help)
grep -q "^Usage: outpost" <<<"$help" || fail "outpost --help printed no usage: $help"
bare node_modules/.bin/outpost exec local -- true
mkdir -p tree/src
echo 'export {};' >tree/src/main.ts
echo 'a' >tree/notes.txt
found=$(cd tree && bare ../node_modules/.bin/outpost find local . | sort | tr '\n' ' ')
[ "$found" = "notes.txt src/main.ts " ] || fail "outpost find local . printed: $found"
step "CLI ran from the install (--help, exec local -- true, find local .)"

bare node package-pi-smoke.mjs
step "pi tools from the install passed"

# A host's strict TypeScript compiles against the published types, every .d.ts checked (no skipLibCheck), with the
# checkout's compiler:
# - the SDK's two entry points, alone: not one error (and the @internal test knobs are not in them);
# - the integration's: not one error in Outpost's declarations or the consumer. pi's own dependencies do not pass
#   this (measured with pi 0.73: @anthropic-ai/sdk's declarations reach undici-types by relative paths into a
#   node_modules that is not there, @google/genai's need @modelcontextprotocol/sdk, which nothing installs); those
#   are counted and named, not Outpost's to fix.
strict_tsconfig() { # file...
  local files
  files=$(printf '"%s",' "$@")
  cat >tsconfig.json <<EOF
{
  "compilerOptions": {
    "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "strict": true, "noEmit": true,
    "types": ["node"], "skipLibCheck": false
  },
  "files": [${files%,}]
}
EOF
}
cat >sdk-types.ts <<'EOF'
import { type ConnectionOptions, type FileError, LocalExecutionEnv, type Result } from "@outpost/sdk";
import { type Reply, StreamDecoder } from "@outpost/sdk/protocol";
const env = new LocalExecutionEnv();
const text: Promise<Result<string, FileError>> = env.readTextFile("a", { abortSignal: undefined });
const reply: Promise<Reply> = env.connection.request("lstat", { path: "/" });
const decoded: string = new StreamDecoder().decode(new Uint8Array(0));
// @ts-expect-error pingIntervalMs is @internal: stripped from the published declarations
const knobs: ConnectionOptions = { command: ["outpost"], pingIntervalMs: 1 };
export { decoded, knobs, reply, text };
EOF
strict_tsconfig sdk-types.ts
node "$repo/node_modules/typescript/bin/tsc" -p tsconfig.json
step "strict consumer of @outpost/sdk compiled (skipLibCheck false)"

cat >pi-types.ts <<'EOF'
import { createOutpostTools, type OutpostEnv } from "@outpost/pi-coding-agent";
import { LocalExecutionEnv } from "@outpost/sdk";
const env: OutpostEnv = new LocalExecutionEnv();
const toolNames: string[] = createOutpostTools(env).map((tool) => tool.name);
export { toolNames };
EOF
strict_tsconfig pi-types.ts
pi_errors=$(node "$repo/node_modules/typescript/bin/tsc" -p tsconfig.json | grep "error TS" || true)
# Outpost's: an error in the consumer, in @outpost/*'s declarations, or in none (the compiler's own).
ours=$(grep -vE "^node_modules/" <<<"$pi_errors"; grep -E "^node_modules/@outpost/" <<<"$pi_errors") || true
[ -z "$ours" ] || fail "the integration's types do not compile in a strict consumer:"$'\n'"$ours"
theirs=$(grep -c . <<<"$pi_errors" || true)
step "strict consumer of @outpost/pi-coding-agent compiled: no error in Outpost's declarations ($theirs in pi's own dependencies: $(grep -oE "^node_modules/(@[^/]+/)?[^/]+" <<<"$pi_errors" | sort -u | sed 's|node_modules/||' | tr '\n' ' '))"

kib() { du -sk "$1" | cut -f1; }
echo "package-test: @outpost/sdk tarball $(kib "$sdk_tarball") KiB, installed $(kib node_modules/@outpost/sdk) KiB" \
  "(agents $(kib node_modules/@outpost/sdk/bin) KiB), its dependencies ssh2 $(kib node_modules/ssh2) KiB and" \
  "ssh-config $(kib node_modules/ssh-config) KiB"
echo "package-test: @outpost/cli tarball $(kib "$cli_tarball") KiB, installed $(kib node_modules/@outpost/cli) KiB;" \
  "@outpost/pi-coding-agent tarball $(kib "$pi_tarball") KiB, installed $(kib node_modules/@outpost/pi-coding-agent) KiB;" \
  "all of node_modules (pi's packages and @types/node included) $(kib node_modules) KiB"
step "done"
