#!/usr/bin/env bash
# Builds the KWOK controller (sigs.k8s.io/kwok, the kubelet stand-in of the virtual clusters'
# main API server) from the Go module proxy into a version-keyed cache and prints the binary's
# path on the last line. Idempotent: skips the build when the binary exists. The stage files it
# runs with are in the repository (internal/vclusters/kwok/stages, copied from the module's
# kustomize/stage directory); the tool passes them with -c.
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), KWOK_VERSION (default v0.8.0),
#      FORCE=1 to rebuild.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}"
BIN_DIR="$CACHE/kwok/$KWOK_VERSION"
STAMP="$BIN_DIR/.stamp"
want="kwok $KWOK_VERSION"
log() { echo "kwok/build: $*" >&2; }

if [ "${FORCE:-0}" != 1 ] && [ -x "$BIN_DIR/kwok" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  log "cached: $BIN_DIR/kwok"
  echo "$BIN_DIR/kwok"
  exit 0
fi
start=$(date +%s)
mkdir -p "$BIN_DIR"
tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "building kwok $KWOK_VERSION from the module proxy (≈1 min with a warm module cache, more cold)"
ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install -trimpath -ldflags "$ldflags" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
mv "$tmp/kwok" "$BIN_DIR/kwok"
echo "$want" >"$STAMP"
log "built in $(( $(date +%s) - start )) s: $BIN_DIR/kwok"
echo "$BIN_DIR/kwok"
