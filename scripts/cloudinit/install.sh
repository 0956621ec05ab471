#!/usr/bin/env bash
# Installs Debian's cloud-init (22.4.2 on Debian 12; once, needs root) for the tier-2 test that
# checks every rendered rke2 user data with `cloud-init schema --config-file`
# (internal/backends/rke2 TestCloudInitSchemaReal). Only its schema command is used: a
# policy-rc.d forbids the package to start services while it installs, and nothing of
# cloud-init is enabled or run on this machine. Idempotent.
set -euo pipefail
# shellcheck source=../lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"
log() { echo "cloudinit/install: $*" >&2; }

if dpkg-query -W -f '${Status}' cloud-init 2>/dev/null | grep -q 'install ok installed'; then
	log "cloud-init $(cloud-init --version 2>&1 | awk '{print $2}') is installed"
	exit 0
fi
[ "$(id -u)" = 0 ] || { log "cloud-init is not installed and installing it needs root"; exit 1; }
prc=/usr/sbin/policy-rc.d mark="site-agent scripts/cloudinit/install.sh" rc=0 t0=$(date +%s)
"$prc" cloud-init start >/dev/null 2>&1 || rc=$?
if [ "$rc" != 101 ]; then
	printf '#!/bin/sh\n# %s: no service starts during install\nexit 101\n' "$mark" >"$prc"
	chmod 755 "$prc"
	trap 'grep -qs "$mark" "$prc" && rm -f "$prc"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt_get -q install -y --no-install-recommends --no-upgrade cloud-init; then
	apt_get -q update
	apt_get -q install -y --no-install-recommends --no-upgrade cloud-init
fi
# A machine booted by systemd must not run cloud-init at its next boot because of this package.
if [ -d /run/systemd/system ] || [ -d /etc/cloud ]; then
	touch /etc/cloud/cloud-init.disabled 2>/dev/null || true
fi
log "installed cloud-init in $(($(date +%s) - t0)) s"
