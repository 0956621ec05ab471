#!/usr/bin/env bash
# Stops the Rancher server, kube-apiserver, controller manager and etcd that up.sh started.
# --purge also deletes the state dir (etcd data, keys, logs).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

purge=false
case ${1:-} in
--purge) purge=true ;;
"") ;;
*) die "usage: $0 [--purge]" ;;
esac
[ -d "$STATE" ] || { log "nothing to stop: $STATE does not exist"; exit 0; }
exec 9>"$STATE/.lock"
flock -w 600 9 || die "another up.sh/down.sh holds $STATE/.lock"
stop_all
rm -f "$STATE/env"
if $purge; then
	exec 9>&-
	rm -rf "$STATE"
	log "removed $STATE"
fi
log "down"
