#!/usr/bin/env bash
# The Debian packages a group of tests needs (tools/system-deps.txt lists them): nothing to do when every tool is
# there; otherwise installs the missing packages when it may (root, apt-get), else stops with one line naming
# exactly what to install.
#   tools/system-deps.sh GROUP...          install or name (make setup, .ci/run, make test-windows)
#   tools/system-deps.sh --check GROUP...  only name what is missing (exit 1 when something is)
#   tools/system-deps.sh --list GROUP...   print the groups' packages, one a line
# Installing never starts a service (a policy-rc.d that says no is in place while apt-get runs: openssh-server
# would otherwise start a system sshd).
set -euo pipefail
table=$(dirname "$0")/system-deps.txt

mode=install
case "${1:-}" in
  --check) mode=check; shift ;;
  --list) mode=list; shift ;;
esac
[ $# -gt 0 ] || { echo "usage: tools/system-deps.sh [--check|--list] GROUP... (groups: $(grep -v '^#' "$table" | cut -d' ' -f1 | sort -u | tr '\n' ' '))" >&2; exit 2; }

found() { # a tool as the table names it: `a|b` is found when either is; /path is that executable file
  local alternative
  IFS='|' read -ra alternatives <<<"$1"
  for alternative in "${alternatives[@]}"; do
    if [[ $alternative == /* ]]; then [ -x "$alternative" ] && return 0
    else
      command -v "$alternative" >/dev/null && return 0
      # A user's PATH often lacks the sbin directories where Debian puts useradd, unshare's kin and iptables.
      [ -x "/usr/sbin/$alternative" ] || [ -x "/sbin/$alternative" ] && return 0
    fi
  done
  return 1
}

packages=()
missing=()
for group in "$@"; do
  grep -q "^$group " "$table" || { echo "tools/system-deps.sh: no group $group in $table" >&2; exit 2; }
  while read -r _ package tools; do
    packages+=("$package")
    for tool in $tools; do
      if ! found "$tool"; then missing+=("$package"); break; fi
    done
  done < <(grep "^$group " "$table")
done

if [ "$mode" = list ]; then printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'; exit 0; fi
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')

if [ "$mode" = check ] || [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "outpost: the tests ($*) need Debian packages that are missing: run \`apt-get install ${missing[*]}\` as root (make does it itself when run as root)" >&2
  exit 1
fi

echo "tools/system-deps.sh: installing ${missing[*]} (for $*)" >&2
export DEBIAN_FRONTEND=noninteractive
made_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
