#!/usr/bin/env bash
# The WAN rig: runs a command on the client side of a real network path with latency, loss and a rate cap.
#
#   tools/wan/rig.sh [--profile lan|wan|far|lossy] COMMAND [ARGS...]
#
# Two network namespaces of its own, "owan-<pid>-c" (client) and "owan-<pid>-s" (server), are joined by the delay
# line tools/wan/link (a TUN device in each, packets forwarded in user space with a one-way delay, a rate cap and
# loss; this kernel has no netem). The client has 169.254.77.1 and the server 169.254.77.2, link-local addresses
# that exist only inside these namespaces: nothing is routed out of them. COMMAND runs in the client namespace
# (`ip netns exec`) with these variables:
#   OUTPOST_WAN_CONTROL    the delay line's control socket (tools/wan/link.ts switches profiles through it)
#   OUTPOST_WAN_SERVER_NS  the server namespace's name: `ip netns exec $OUTPOST_WAN_SERVER_NS sshd ...`
#   OUTPOST_WAN_SERVER     the server's address, OUTPOST_WAN_CLIENT the client's
# On exit, whatever COMMAND did (pass, fail, signal), every process left in the two namespaces is killed, the
# delay line stops (its devices go with it) and the namespaces are deleted. Exits with COMMAND's status.
# Needs root, iproute2 (`ip`) and /dev/net/tun.
set -euo pipefail
cd "$(dirname "$0")/../.."

profile=lan
if [ "${1:-}" = "--profile" ]; then
  profile=$2
  shift 2
fi
[ $# -gt 0 ] || { echo "usage: tools/wan/rig.sh [--profile NAME] COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "tools/wan/rig.sh: needs root (network namespaces, TUN devices)" >&2; exit 1; }
command -v ip >/dev/null || { echo "tools/wan/rig.sh: needs ip (apt-get install iproute2)" >&2; exit 1; }
[ -c /dev/net/tun ] || { echo "tools/wan/rig.sh: needs /dev/net/tun" >&2; exit 1; }

client_ns=owan-$$-c
server_ns=owan-$$-s
client_addr=169.254.77.1
server_addr=169.254.77.2
work=$(mktemp -d /tmp/outpost-wan.XXXXXX)
link_pid=

# Kills every process in a namespace until none is left (a process may fork while the first ones die).
kill_namespace() {
  local ns=$1 pids tries=0
  while pids=$(ip netns pids "$ns" 2>/dev/null) && [ -n "$pids" ] && [ $tries -lt 50 ]; do
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    tries=$((tries + 1))
    sleep 0.1
  done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for ns in "$client_ns" "$server_ns"; do kill_namespace "$ns"; done
  if [ -n "$link_pid" ]; then
    kill -TERM "$link_pid" 2>/dev/null || true
    wait "$link_pid" 2>/dev/null || true
  fi
  for ns in "$client_ns" "$server_ns"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

go build -o "$work/link" ./tools/wan/link

ip netns add "$client_ns"
ip netns add "$server_ns"
for ns in "$client_ns" "$server_ns"; do
  ip -n "$ns" link set lo up
  # No IPv6 on the path: its router and listener solicitations would be traffic nobody asked for.
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

"$work/link" -ns-a "/run/netns/$client_ns" -dev-a owan0 -ns-b "/run/netns/$server_ns" -dev-b owan0 \
  -control "$work/link.sock" -profile "$profile" >"$work/link.out" 2>"$work/link.err" &
link_pid=$!
for _ in $(seq 100); do
  grep -q ready "$work/link.out" 2>/dev/null && break
  kill -0 "$link_pid" 2>/dev/null || { echo "tools/wan/rig.sh: the delay line failed: $(cat "$work/link.err")" >&2; exit 1; }
  sleep 0.05
done
grep -q ready "$work/link.out" || { echo "tools/wan/rig.sh: the delay line did not start" >&2; exit 1; }

# Point-to-point addresses: each side reaches exactly the other's address, through the delay line, and nothing else.
ip -n "$client_ns" link set owan0 mtu 1500 up
ip -n "$server_ns" link set owan0 mtu 1500 up
ip -n "$client_ns" addr add "$client_addr/32" peer "$server_addr/32" dev owan0
ip -n "$server_ns" addr add "$server_addr/32" peer "$client_addr/32" dev owan0

# In the background, so that a signal to this script runs its trap at once (bash runs traps only between foreground
# commands); stdin is passed on explicitly, as a background command would otherwise read /dev/null.
status=0
OUTPOST_WAN_CONTROL=$work/link.sock OUTPOST_WAN_SERVER_NS=$server_ns OUTPOST_WAN_SERVER=$server_addr \
  OUTPOST_WAN_CLIENT=$client_addr ip netns exec "$client_ns" "$@" <&0 &
wait $! || status=$?
exit "$status"
