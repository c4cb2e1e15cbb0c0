#!/usr/bin/env bash
# `make test-unprivileged`: the cases that need denied permissions — the conformance cases marked `permissions` on
# every target, and the permissions property at a small fixed budget — run as a user that file permissions apply
# to. Root reads a mode-000 file, so as root these cases are skipped by `make test`; this pass is where they run.
#
# As root: creates the account $OUTPOST_UNPRIVILEGED_USER (default outpost-unprivileged) if it is missing, copies
# the built tree into a directory the account owns (so nothing is written into root's tree) and runs vitest there
# as that account (setpriv). As any other user: runs the same tests in place.
# Fails when a test fails, when no test ran, or when any selected test was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=(
  spec/test/conformance-reference.test.ts
  spec/test/conformance-local.test.ts
  spec/test/conformance-remote.test.ts
  spec/test/conformance-ssh.test.ts
  properties/permissions.test.ts
)

# Runs the selection in the current directory as the current user; $1 is the JSON report to check.
run_pass() {
  local report=$1
  OUTPOST_PERMISSION_PASS=1 npx vitest run --reporter=default --reporter=json --outputFile="$report" "${tests[@]}"
  node -e '
    const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const skipped = report.numPendingTests + report.numTodoTests;
    console.log(`unprivileged pass: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
    if (report.numFailedTests > 0 || !report.success) throw new Error("unprivileged pass: tests failed");
    if (report.numPassedTests === 0) throw new Error("unprivileged pass: no test ran");
    if (skipped > 0) throw new Error("unprivileged pass: a permission test was skipped where it must run");
  ' "$report"
}

if [ "$(id -u)" -ne 0 ]; then
  run_pass "$(mktemp -d)/report.json"
  exit 0
fi

account=${OUTPOST_UNPRIVILEGED_USER:-outpost-unprivileged}
if ! id -u "$account" >/dev/null 2>&1; then
  useradd --system --user-group --create-home --shell /bin/bash "$account"
fi
home=$(getent passwd "$account" | cut -d: -f6)

work=$(mktemp -d /tmp/outpost-unprivileged.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The built tree (sources, the agent in sdk/bin, node_modules) without git's and the caches' files, owned by the
# account. node_modules is hard-linked when it can be (same file system): its directories are new and the
# account's, so vite can write its caches there, while the files stay root's and read-only to the account.
mkdir "$work/repo" "$work/tmp"
tar --exclude=./.git --exclude=./.cache --exclude=./node_modules -cf - . | tar -xf - -C "$work/repo"
chown -R "$account:" "$work"
if cp -al node_modules "$work/repo/node_modules" 2>/dev/null; then
  find "$work/repo/node_modules" -type d -exec chown "$account:" {} +
else
  rm -rf "$work/repo/node_modules"
  cp -a node_modules "$work/repo/node_modules"
  chown -R "$account:" "$work/repo/node_modules"
fi

# The directories of PATH the account can search: a shell's lookup that meets an unsearchable one (root's ~/go/bin)
# reports "Permission denied" where one over SSH, with sshd's PATH, reports "not found".
search_path=$(IFS=:; for dir in $PATH; do
  setpriv --reuid="$account" --regid="$account" --init-groups test -x "$dir" 2>/dev/null && printf '%s:' "$dir"
done)
search_path=${search_path%:}
# The same Node as root's: .ci/run may have put one from .cache/ first on PATH (tools/node-major.sh), in a directory
# the account may not reach; then a copy of it, readable by the account, goes first (else an older system node would run).
node_bin=$(command -v node)
if ! setpriv --reuid="$account" --regid="$account" --init-groups test -x "$node_bin" 2>/dev/null; then
  mkdir "$work/node-bin"
  cp -l "$node_bin" "$work/node-bin/node" 2>/dev/null || cp "$node_bin" "$work/node-bin/node"
  search_path=$work/node-bin:$search_path
fi

# A clean environment: only what node, npx and the tests need (and a property run's budget scale, seed and path).
setpriv --reuid="$account" --regid="$account" --init-groups --reset-env \
  env HOME="$home" PATH="$search_path" TMPDIR="$work/tmp" ${LANG:+LANG="$LANG"} ${CI:+CI="$CI"} \
  ${NUM_RUNS_SCALE:+NUM_RUNS_SCALE="$NUM_RUNS_SCALE"} ${OUTPOST_PROP_SEED:+OUTPOST_PROP_SEED="$OUTPOST_PROP_SEED"} ${OUTPOST_PROP_PATH:+OUTPOST_PROP_PATH="$OUTPOST_PROP_PATH"} \
  bash -c "set -euo pipefail; cd '$work/repo'; $(declare -p tests); $(declare -f run_pass); run_pass '$work/report.json'"
