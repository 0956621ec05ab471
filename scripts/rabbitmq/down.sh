#!/usr/bin/env bash
# Stops the broker scripts/rabbitmq/up.sh started. --purge also deletes the state dir
# (queues, users, logs); the package stays installed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=../lib/down.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/down.sh"

down_args "$@"
down_lock
stop_server
rm -f "$STATE/env"
down_done
