#!/usr/bin/env bash
# `make mutation`: mutation testing of both sides — Stryker on sdk/src (TypeScript), gremlins on agent-go/internal
# (Go) — then one summary of scores and surviving mutants (tools/mutation/summary.ts).
#
# Scope, so that a run fits a nightly job:
#   default           the files changed against $MUTATION_BASE (default main), committed or not (for Go: the
#                     changed non-test files, each package's tests run against them);
#   ALL=1             every file of sdk/src and every package of agent-go/internal;
#   TS_FILES="a b"    these sdk/src files, GO_PKGS="x y" these agent-go/internal packages (either may be "none");
#   STRYKER_CONCURRENCY=N  Stryker's test runner processes (default 2, stryker.config.mjs).
# Stryker runs incrementally: results of mutants whose code and tests did not change are taken from
# .cache/mutation/stryker-incremental.json (seeded from tools/mutation/stryker-results.json.gz, and saved there by
# `make mutation-save`), which a run updates every 30 s. Reports land in .cache/mutation/.
set -euo pipefail
cd "$(dirname "$0")/../.."

GREMLINS=github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
out=.cache/mutation
mkdir -p "$out"
out_abs=$(realpath "$out")

changed() { # changed files of the given pathspecs against the merge base with $MUTATION_BASE, plus untracked ones
  local base
  base=$(git merge-base "${MUTATION_BASE:-main}" HEAD)
  { git diff --name-only --diff-filter=d "$base" -- "$@"; git ls-files --others --exclude-standard -- "$@"; } | sort -u
}

# The TypeScript files: every .ts of sdk/src but index.ts and types.ts (re-exports and types, nothing to mutate).
if [ -n "${TS_FILES:-}" ]; then
  read -r -a ts_files <<<"$TS_FILES"
  [ "${ts_files[*]}" = none ] && ts_files=()
elif [ "${ALL:-}" = 1 ]; then
  mapfile -t ts_files < <(git ls-files 'sdk/src/*.ts' | grep -v -e '^sdk/src/index\.ts$' -e '^sdk/src/contract/types\.ts$')
else
  mapfile -t ts_files < <(changed 'sdk/src/*.ts' | grep -v -e '^sdk/src/index\.ts$' -e '^sdk/src/contract/types\.ts$' || true)
fi

# The Go packages: directories of agent-go/internal with non-test Go files.
go_packages_of() { grep -E '\.go$' | grep -v '_test\.go$' | xargs -r -n1 dirname | sort -u; }
if [ -n "${GO_PKGS:-}" ]; then
  read -r -a go_pkgs <<<"$GO_PKGS"
  [ "${go_pkgs[*]}" = none ] && go_pkgs=()
  go_pkgs=("${go_pkgs[@]#agent-go/internal/}")
  go_pkgs=("${go_pkgs[@]/#/agent-go/internal/}")
elif [ "${ALL:-}" = 1 ]; then
  mapfile -t go_pkgs < <(git ls-files 'agent-go/internal/**.go' | go_packages_of)
else
  changed_go=$(changed 'agent-go/internal/**.go' | grep -v '_test\.go$' || true)
  mapfile -t go_pkgs < <(go_packages_of <<<"$changed_go" || true)
fi

echo "mutation: ${#ts_files[@]} TypeScript file(s), ${#go_pkgs[@]} Go package(s)"

if [ ${#ts_files[@]} -gt 0 ]; then
  rm -f "$out"/stryker-report.json
  # Stryker's results so far, kept in the repository (`make mutation-save`): a full run of sdk/src takes longer
  # than a working session here, so runs pick up where the last one stopped (checkpoint-reporter.mjs saves as it
  # goes).
  tools/mutation/seed.sh
  # Two runs: the files outside sdk/src/ssh without the loopback-sshd test (vitest.config.ts), then sdk/src/ssh
  # with every test but the slow ones slow-tests.ts names.
  concurrency=()
  [ -n "${STRYKER_CONCURRENCY:-}" ] && concurrency=(--concurrency "$STRYKER_CONCURRENCY")
  ssh_files=() core_files=()
  for file in "${ts_files[@]}"; do
    case $file in sdk/src/ssh/*) ssh_files+=("$file") ;; *) core_files+=("$file") ;; esac
  done
  if [ ${#core_files[@]} -gt 0 ]; then
    OUTPOST_MUTATION_GROUP=core npx stryker run tools/mutation/stryker.config.mjs "${concurrency[@]}" \
      --mutate "$(IFS=,; echo "${core_files[*]}")"
  fi
  if [ ${#ssh_files[@]} -gt 0 ]; then
    npx stryker run tools/mutation/stryker.config.mjs "${concurrency[@]}" --mutate "$(IFS=,; echo "${ssh_files[*]}")"
  fi
  # The second run's report holds the first's results too: Stryker carries over the saved results of mutants
  # outside a run's scope.
fi

if [ ${#go_pkgs[@]} -gt 0 ]; then
  rm -f "$out"/gremlins-*.json
  # gremlins copies the module into a work directory per worker: give it a module of only the Go sources, not
  # node_modules and .git.
  module="$out/go-module"
  rm -rf "$module"
  mkdir -p "$module"
  git ls-files -z --cached --others --exclude-standard go.mod go.sum agent-go | xargs -0 cp --parents -t "$module"
  for pkg in "${go_pkgs[@]}"; do
    name=${pkg#agent-go/internal/}
    # Only the changed files of the package, unless the package was named or ALL=1.
    excludes=()
    if [ -n "${changed_go:-}" ]; then
      while read -r file; do
        grep -qxF "$file" <<<"$changed_go" || excludes+=(-E "(^|/)$(basename "$file" .go)\.go\$")
      done < <(git ls-files "$pkg/*.go" | grep -v '_test\.go$')
    fi
    echo "gremlins: $pkg"
    (cd "$module" && go run "$GREMLINS" unleash --workers 2 --timeout-coefficient 10 "${excludes[@]}" \
      --output "$out_abs/gremlins-${name//\//__}.json" "./$pkg")
  done
fi

sides=()
[ ${#ts_files[@]} -gt 0 ] && sides+=(stryker)
[ ${#go_pkgs[@]} -gt 0 ] && sides+=(gremlins)
# The report also holds the saved results of files this run did not mutate: the summary takes this run's files.
node --import tsx tools/mutation/summary.ts "$out" "${sides[@]}" --files "$(IFS=,; echo "${ts_files[*]}")"
