#!/usr/bin/env bash
# Builds Helm from the Go module proxy (no download site needed) into a version-keyed cache and
# prints the binary's path on the last line. Idempotent: skips the build when the binary exists.
# The version and the Kubernetes version `helm template` assumes are stamped with -ldflags
# (a plain `go install` reports v3 and Kubernetes v1.20).
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), HELM_VERSION (default v3.17.3),
#      FORCE=1 to rebuild.
set -euo pipefail
# shellcheck source=../lib/gobuild.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/gobuild.sh"
HELM_VERSION="${HELM_VERSION:-v3.17.3}"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=32"
gobuild helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$ldflags" "helm $HELM_VERSION k8s 1.32" \
	"≈2–6 min cold on 2 cores" version --short
