#!/usr/bin/env bash
# Runs every Go fuzz target for $FUZZTIME (default 10s). `go test -fuzz` accepts one target per package run,
# so each target gets a run of its own. A crash leaves its input under the package's testdata/fuzz/ and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10s}
targets=(
  "FuzzFrameDecoder ./agent-go/internal/frame/"
  "FuzzDispatch ./agent-go/internal/server/"
  "FuzzParseRequest ./agent-go/internal/server/"
  "FuzzOps ./agent-go/internal/fsops/"
)

for entry in "${targets[@]}"; do
  read -r name pkg <<<"$entry"
  echo "fuzz: $name ($pkg) for $FUZZTIME"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"
done
