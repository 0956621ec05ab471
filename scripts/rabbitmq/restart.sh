#!/usr/bin/env bash
# Restarts the broker of scripts/rabbitmq/up.sh for tests that need a broker outage:
#   restart.sh            stop, then start again (waits until it answers)
#   restart.sh stop       stop only (connections drop, ports close)
#   restart.sh start      start again (same as up.sh)
# Queues are durable and kept; the state dir stays.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
case ${1:-both} in
stop) "$here/down.sh" ;;
start) "$here/up.sh" ;;
both) "$here/down.sh" && "$here/up.sh" ;;
*) die "usage: $0 [stop|start]" ;;
esac
