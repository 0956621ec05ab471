#!/usr/bin/env bash
# Tier 2, container part: builds the OCI image without a registry (build.sh) and runs it
# read-only and non-root with podman against the Waldur simulator (test/deploy).
# Installs buildah, podman, runc as root when they are missing. Prints the image size.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
log() { echo "container/test: $*" >&2; }

missing=()
for tool in buildah podman runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing ${missing[*]}; install as root: apt-get install -y buildah podman runc"
    exit 1
  fi
  log "installing buildah podman runc"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck source=../lib/apt.sh
  . scripts/lib/apt.sh # apt_get waits (bounded) while another apt/dpkg holds a lock
  apt_get install -y buildah podman runc >/dev/null ||
    { apt_get update >/dev/null && apt_get install -y buildah podman runc >/dev/null; }
fi
image=$(./scripts/container/build.sh localhost/site-agent:test | tail -1)
log "image size: $(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}')"
SITE_AGENT_IMAGE="$image" go test -count=1 -v -run 'Container' ./test/deploy/ 2>&1 | grep -E '^(=== RUN|--- |    |PASS|FAIL|ok )'
