#!/usr/bin/env bash
# The npm package as a host installs it: packs @outpost/sdk (with every `make dist` agent and the manifest, which
# `make test-package` builds first), installs the tarball into an empty directory, and runs tools/package-smoke.mjs
# there with no Go on PATH. Prints the installed sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

for name in linux-x64 linux-arm64 darwin-x64 darwin-arm64 windows-x64 windows-arm64; do
  ls sdk/bin/"$name"/outpost* >/dev/null 2>&1 || { echo "package-test: no sdk/bin/$name agent; run make dist" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/outpost-package-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/pack" "$work/app"
npm pack -w @outpost/sdk --pack-destination "$work/pack" --silent >/dev/null
tarball=$(ls "$work/pack"/*.tgz)
members=$(tar -tzf "$tarball")
for member in package/README.md package/LICENSE package/bin/manifest.json package/dist/index.js \
  package/dist/protocol.js package/dist/protocol.d.ts package/dist/index.d.ts.map package/src/index.ts; do
  grep -qx "$member" <<<"$members" || { echo "package-test: $member is not in the package" >&2; exit 1; }
done

cd "$work/app"
echo '{ "name": "outpost-package-test", "private": true, "type": "module" }' >package.json
npm install --no-audit --no-fund --prefer-offline "$tarball" >/dev/null
cp "$repo/tools/package-smoke.mjs" .

# Only Node and the system's tools: no Go, no checkout agent.
node_dir=$(dirname "$(command -v node)")
bare_path="$node_dir:/usr/bin:/bin"
if PATH=$bare_path command -v go >/dev/null; then
  echo "package-test: go is still on PATH ($bare_path)" >&2
  exit 1
fi
env -u OUTPOST_AGENT PATH="$bare_path" node package-smoke.mjs

# A host's TypeScript compiles against the published types of both entry points, and the @internal test knobs are
# not in them (with the checkout's compiler: nothing is installed for it).
cat >tsconfig.json <<EOF
{
  "compilerOptions": {
    "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "strict": true, "noEmit": true,
    "typeRoots": ["$repo/node_modules/@types"], "types": ["node"], "skipLibCheck": true
  },
  "files": ["types-smoke.ts"]
}
EOF
cat >types-smoke.ts <<'EOF'
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
node "$repo/node_modules/typescript/bin/tsc" -p tsconfig.json

echo "package-test: tarball $(du -k "$tarball" | cut -f1) KiB; installed @outpost/sdk $(du -sk node_modules/@outpost/sdk | cut -f1) KiB (agents $(du -sk node_modules/@outpost/sdk/bin | cut -f1) KiB), with its dependencies $(du -sk node_modules | cut -f1) KiB"
