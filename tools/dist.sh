#!/usr/bin/env bash
# Cross-compiles the agent for every supported platform into sdk/bin/<platform>-<arch>/outpost[.exe] and writes
# sdk/bin/manifest.json ({version, agents: {"<platform>-<arch>": {path, sha256, size}}}).
#
# The builds are static (CGO_ENABLED=0) and reproducible: -trimpath, no VCS stamp, an empty build id and fixed
# ldflags, so the same source and Go version give byte-identical binaries (and hashes) on any machine.
#
# Environment: VERSION (default: sdk/package.json's version), LDFLAGS (default: strip, empty build id, version),
# OUT (default: sdk/bin), ONLY (optional: space-separated <platform>-<arch> names to build, e.g. "linux-x64").
set -euo pipefail
cd "$(dirname "$0")/.."

GO_PKG=github.com/outpost-dev/outpost
VERSION=${VERSION:-$(node -p "require('./sdk/package.json').version")}
LDFLAGS=${LDFLAGS:-"-s -w -buildid= -X $GO_PKG/agent-go/internal/version.Version=$VERSION"}
OUT=${OUT:-sdk/bin}

# <GOOS>/<GOARCH> <platform>-<arch>; android is built only if the toolchain manages it without cgo.
targets=(
  "linux/amd64 linux-x64"
  "linux/arm64 linux-arm64"
  "darwin/amd64 darwin-x64"
  "darwin/arm64 darwin-arm64"
  "windows/amd64 windows-x64"
  "windows/arm64 windows-arm64"
  "android/arm64 android-arm64"
)

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

mkdir -p "$OUT"
entries=()
for target in "${targets[@]}"; do
  read -r goos_arch name <<<"$target"
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
    continue
  fi
  goos=${goos_arch%/*}
  goarch=${goos_arch#*/}
  exe=outpost
  [ "$goos" = windows ] && exe=outpost.exe
  mkdir -p "$OUT/$name"
  # Build next to the destination, then rename: a running agent binary is never rewritten in place.
  tmp="$OUT/$name/.$exe.tmp"
  if ! CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false -ldflags "$LDFLAGS" \
    -o "$tmp" ./agent-go/cmd/outpost; then
    rm -f "$tmp"
    if [ "$goos" = android ]; then
      echo "dist: $name does not build without cgo; skipped" >&2
      rmdir "$OUT/$name" 2>/dev/null || true
      continue
    fi
    exit 1
  fi
  mv -f "$tmp" "$OUT/$name/$exe"
  hash=$(sha256 "$OUT/$name/$exe")
  size=$(wc -c <"$OUT/$name/$exe" | tr -d ' ')
  echo "dist: $name/$exe $size bytes sha256 $hash"
  entries+=("    \"$name\": { \"path\": \"$name/$exe\", \"sha256\": \"$hash\", \"size\": $size }")
done

{
  echo "{"
  echo "  \"version\": \"$VERSION\","
  echo "  \"agents\": {"
  for i in "${!entries[@]}"; do
    sep=,
    [ "$i" -eq $((${#entries[@]} - 1)) ] && sep=
    echo "${entries[$i]}$sep"
  done
  echo "  }"
  echo "}"
} >"$OUT/manifest.json.tmp"
mv -f "$OUT/manifest.json.tmp" "$OUT/manifest.json"
echo "dist: wrote $OUT/manifest.json"
