#!/usr/bin/env bash
# Stops the Rancher server, kube-apiserver, controller manager and etcd that up.sh started.
# --purge also deletes the state dir (etcd data, keys, logs).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=../lib/down.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/down.sh"

down_args "$@"
down_lock
stop_all
rm -f "$STATE/env"
down_done
