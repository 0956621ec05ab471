#!/usr/bin/env bash
# Makes sure this machine can run the node emulator's sandboxes (internal/sim/nodeemu Sandbox:
# each emulated VM's rendered bootstrap script run with /bin/sh, chrooted in a private mount
# namespace) and real etcd members: curl (installed once, needs root), and Debian's essential
# sh, sed, base64, env, mount, unshare and chroot, which are only checked. etcd itself comes with
# scripts/kube/build.sh. Idempotent.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"
log() { echo "sandbox/install: $*" >&2; }

for p in sh sed base64 env mount unshare chroot; do
	command -v "$p" >/dev/null || { log "$p is missing (an essential Debian package?)"; exit 1; }
done
if command -v curl >/dev/null; then
	log "$(curl --version | head -1)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { log "curl is not installed and installing it needs root"; exit 1; }
t0=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
if ! apt_get -q install -y --no-install-recommends --no-upgrade curl; then
	apt_get -q update
	apt_get -q install -y --no-install-recommends --no-upgrade curl
fi
log "installed curl in $(($(date +%s) - t0)) s"
