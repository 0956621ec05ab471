#!/usr/bin/env bash
# Builds the KWOK controller (sigs.k8s.io/kwok, the kubelet stand-in of the virtual clusters'
# main API server) from the Go module proxy into a version-keyed cache and prints the binary's
# path on the last line. Idempotent: skips the build when the binary exists. The stage files it
# runs with are in the repository (internal/vclusters/kwok/stages, copied from the module's
# kustomize/stage directory); the tool passes them with -c.
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), KWOK_VERSION (default v0.8.0),
#      FORCE=1 to rebuild.
set -euo pipefail
# shellcheck source=../lib/gobuild.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gobuild.sh"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
gobuild kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
	"kwok $KWOK_VERSION" "≈1 min with a warm module cache, more cold"
