#!/usr/bin/env bash
# Builds Helm from the Go module proxy (no download site needed) into a version-keyed cache and
# prints the binary's path on the last line. Idempotent: skips the build when the binary exists.
# The version and the Kubernetes version `helm template` assumes are stamped with -ldflags
# (a plain `go install` reports v3 and Kubernetes v1.20).
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), HELM_VERSION (default v3.17.3),
#      FORCE=1 to rebuild.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
HELM_VERSION="${HELM_VERSION:-v3.17.3}"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}"
BIN_DIR="$CACHE/helm/$HELM_VERSION"
STAMP="$BIN_DIR/.stamp"
want="helm $HELM_VERSION k8s 1.32"
log() { echo "helm/build: $*" >&2; }

if [ "${FORCE:-0}" != 1 ] && [ -x "$BIN_DIR/helm" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  log "cached: $BIN_DIR/helm"
  echo "$BIN_DIR/helm"
  exit 0
fi
start=$(date +%s)
mkdir -p "$BIN_DIR"
tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "building helm $HELM_VERSION from the module proxy (≈2–6 min cold on 2 cores)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=32"
GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
mv "$tmp/helm" "$BIN_DIR/helm"
echo "$want" >"$STAMP"
log "built in $(( $(date +%s) - start )) s: $("$BIN_DIR/helm" version --short)"
echo "$BIN_DIR/helm"
