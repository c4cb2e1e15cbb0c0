#!/usr/bin/env bash
# Seeds Stryker's incremental file (.cache/mutation/stryker-incremental.json) from the results kept in the
# repository (tools/mutation/stryker-results.json.gz, written by `make mutation-save`) when there is none yet, so a
# fresh clone resumes the run where the last one stopped. Used by run.sh and `make mutation-summary`.
set -euo pipefail
cd "$(dirname "$0")/../.."
incremental=.cache/mutation/stryker-incremental.json
saved=tools/mutation/stryker-results.json.gz
mkdir -p "$(dirname "$incremental")"
if [ ! -e "$incremental" ] && [ -e "$saved" ]; then
  gunzip -c "$saved" >"$incremental"
fi
