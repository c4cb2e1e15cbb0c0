#!/usr/bin/env bash
# `make test-wan`: the tests that need a real network path (tools/wan/test/, in the WAN rig), then the rig's own
# cleanup check: a run that fails, and a run interrupted while a process it started is still alive in the server
# namespace, must both leave no namespace, device or process behind. Needs root, iproute2, iptables, iputils-ping,
# openssh-server and openssh-client. Arguments go to vitest: test files to run (all of tools/wan/test/ by default;
# `make test-wan WAN_TESTS=tools/wan/test/cut-sequences.test.ts`).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The `wan` group of tools/system-deps.txt (ip, iptables, ping), installed when missing as root; sshd and the
# OpenSSH client come with the `test` group.
tools/system-deps.sh wan
for tool in ssh scp sftp; do
  command -v "$tool" >/dev/null || { echo "make test-wan: needs $tool (apt-get install openssh-client)" >&2; exit 1; }
done
[ -x /usr/sbin/sshd ] || { echo "make test-wan: needs /usr/sbin/sshd (apt-get install openssh-server)" >&2; exit 1; }

status=0
tools/wan/rig.sh npx vitest run --config tools/wan/vitest.config.ts "$@" || status=$?

# What a rig started as process $1 left behind: its namespaces, devices named like its own in this namespace, and
# processes whose command line names its namespaces or carries the marker $2.
leftovers() {
  local pid=$1 marker=$2
  ip netns list | grep "owan-$pid-" || true
  ip -o link | grep owan || true
  ps -eo pid=,args= | grep -E "owan-$pid-|$marker" | grep -v grep || true
}

check_clean() {
  local what=$1 pid=$2 marker=$3 left
  left=$(leftovers "$pid" "$marker")
  if [ -n "$left" ]; then
    echo "make test-wan: the rig left this behind after $what:" >&2
    echo "$left" >&2
    status=1
  else
    echo "rig cleanup after $what: nothing left"
  fi
}

# A command that fails.
marker="sleep 4242.$$"
rig_status=0
tools/wan/rig.sh false &
rig=$!
wait "$rig" || rig_status=$?
[ "$rig_status" -eq 1 ] || { echo "make test-wan: the rig returned $rig_status for a failing command, not 1" >&2; status=1; }
check_clean "a failing command" "$rig" "$marker"

# A run stopped by SIGTERM while its command and a detached process in the server namespace are alive.
tools/wan/rig.sh bash -c "ip netns exec \$OUTPOST_WAN_SERVER_NS setsid $marker & $marker" &
rig=$!
for _ in $(seq 100); do
  ps -eo args= | grep -q "^$marker" && break
  sleep 0.1
done
ps -eo args= | grep -q "^$marker" || { echo "make test-wan: the interrupted run never started" >&2; status=1; }
kill -TERM "$rig"
wait "$rig" || true
check_clean "SIGTERM" "$rig" "$marker"
exit "$status"
