#!/usr/bin/env bash
# Stops what scripts/openstack/up.sh started: the five API processes and, after
# up.sh --compute, Glance and the compute daemons (by the pidfiles in the state
# dir), and PostgreSQL if up.sh was the one that started it and nobody else is
# connected. Packages stay installed; so does the broker of scripts/rabbitmq
# (and the vhost up.sh --compute made on it). The next up.sh is without compute
# unless asked again.
#   --purge   also drops the OpenStack databases and role, and deletes the
#             state dir (the next up.sh starts from a clean slate).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=../lib/down.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/down.sh"

down_args "$@"

[ "$(id -u)" = 0 ] || die "run as root"
down_lock

stop_all nova-compute nova-conductor nova-scheduler cinder-volume cinder-scheduler glance
stop_all neutron cinder nova placement keystone
rm -f "$STATE/env" "$STATE/compute"

other_clients() {
	local ours
	# shellcheck disable=SC2086 # one quoted name per database
	ours=$(printf "'%s'," $DATABASES)
	psql_admin -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
		AND pid <> pg_backend_pid() AND coalesce(datname, '') NOT IN (${ours%,})"
}

if $purge && pg_online; then
	for d in $DATABASES; do
		psql_admin -c "DROP DATABASE IF EXISTS $d WITH (FORCE)"
	done
	psql_admin -c "DROP ROLE IF EXISTS $DB_ROLE"
	log "dropped databases ($DATABASES) and role $DB_ROLE"
fi

mark="$STATE/run/postgres.started-by-up"
if [ -e "$mark" ] && pg_online; then
	if [ "$(other_clients)" = 0 ]; then
		pg_ctlcluster --skip-systemctl-redirect 15 main stop
		log "stopped PostgreSQL 15/main (up.sh had started it)"
	else
		log "left PostgreSQL running: other clients are connected"
	fi
fi
rm -f "$mark"

down_done
