#!/usr/bin/env bash
# Runs every Go fuzz target. `go test -fuzz` accepts one target per package run, so each target gets a run of its
# own. A crash leaves its input under the package's testdata/fuzz/ and fails.
#
# FUZZTIME sets the budget of every target (a duration such as 60s, or a count such as 5000x). Unset, each target
# runs its own count of inputs, sized to a few seconds here: counts rather than a duration, because a duration that
# expires while a worker is inside a slow input makes `go test` fail with "context deadline exceeded", which is
# no finding of ours and would make CI flaky.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(
  "FuzzFrameDecoder ./agent-go/internal/frame/ 50000x"
  "FuzzDispatch ./agent-go/internal/server/ 20000x"
  "FuzzParseRequest ./agent-go/internal/server/ 50000x"
  "FuzzOps ./agent-go/internal/fsops/ 3000x"
  "FuzzIgnoreFile ./agent-go/internal/listfiles/ 20000x"
)

for entry in "${targets[@]}"; do
  read -r name pkg count <<<"$entry"
  budget=${FUZZTIME:-$count}
  echo "fuzz: $name ($pkg) for $budget"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$budget" "$pkg"
done
