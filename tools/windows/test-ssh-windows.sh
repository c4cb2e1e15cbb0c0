#!/usr/bin/env bash
# The Windows SSH test of `make test-windows`: `connectSsh` from this Linux host to a Windows account under Wine,
# deploying the Windows agent to %USERPROFILE%\.outpost\bin and driving it (tools/windows/ssh-windows.e2e.test.ts).
# There is no Windows OpenSSH under Wine: tools/windows/sshd is its stand-in (what it models and what it does not is
# written at its top), built here for Windows and run in the same Wine prefix as the conformance run, whose setup
# (packages, the agent, the stand-ins for what Wine lacks) is test-windows.sh's, sourced. Never committed binaries.
set -euo pipefail
# shellcheck source=tools/windows/test-windows.sh
source "$(dirname "$0")/test-windows.sh"

main_ssh() {
  install_packages
  build_programs
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -trimpath -o "$cache/bin/sshd.exe" ./tools/windows/sshd
  trap 'wineserver -k 2>/dev/null || true; wineserver -w 2>/dev/null || true' EXIT
  prepare_prefix
  OUTPOST_WINE_SSHD=$cache/bin/sshd.exe OUTPOST_WINDOWS_AGENT=$cache/bin/outpost.exe \
    npx vitest run --config tools/windows/ssh.vitest.config.ts
}

main_ssh "$@"
