#!/usr/bin/env bash
# Installs (Debian 12 packages) and starts OpenStack Zed APIs on 127.0.0.1:
# Keystone :5000, Placement :8778, Nova API :8774, Cinder API :8776 and
# Neutron :9696, on the local PostgreSQL 15, with no message broker (fake://
# transport) and no agents. Idempotent: with everything up it returns in
# seconds. Writes ${SITE_AGENT_OS_STATE:-/var/tmp/site-agent-openstack}/env.
#   --compute (or SITE_AGENT_OS_COMPUTE=1): also real Nova servers with no
#             hypervisor (compute.sh): Glance :9292, nova-conductor, -scheduler,
#             -compute (fake driver), cinder-scheduler, -volume (fake driver), on
#             the broker of scripts/rabbitmq/up.sh. Sticky until down.sh.
# Stop with down.sh. See README.md next to this script.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=conf.sh
. "$HERE/conf.sh"
# shellcheck source=compute.sh
. "$HERE/compute.sh"
# shellcheck source=../lib/apt.sh
. "$HERE/../lib/apt.sh"

PACKAGES="keystone nova-api neutron-server cinder-api placement-api uwsgi-core uwsgi-plugin-python3 python3-psycopg2 curl openssl iproute2 procps"
PG_STARTED_MARK="$STATE/run/postgres.started-by-up"
COMPUTE_MARK="$STATE/compute"

packages() { echo "$PACKAGES"; if compute_on; then echo "$COMPUTE_PACKAGES"; fi; }

all_up() {
	local s
	[ -s "$STATE/env" ] || return 1
	for s in $SERVICES; do
		running "${s%%:*}" && answers "${s##*:}" || return 1
	done
}

installed() {
	local p
	for p in $(packages); do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || return 1
	done
}

# install_packages: apt-get with a policy-rc.d that forbids every package
# from starting its service (so nothing listens on 0.0.0.0), and a private
# archive dir (docker images delete /var/cache/apt/archives/*.deb after every
# dpkg run, which breaks multi-step installs).
install_packages() {
	installed && { log "packages already installed"; return; }
	local prc=/usr/sbin/policy-rc.d backup="" cache="$STATE/apt-archives" try
	if [ -e "$prc" ]; then
		backup="$STATE/policy-rc.d.orig"
		cp -p "$prc" "$backup"
	fi
	printf '#!/bin/sh\n# site-agent scripts/openstack/up.sh: no service starts during install\nexit 101\n' >"$prc"
	chmod 755 "$prc"
	# shellcheck disable=SC2064
	trap "restore_policy_rc '$backup'" EXIT
	mkdir -p "$cache/partial"
	export DEBIAN_FRONTEND=noninteractive
	# apt_get waits (bounded) for other package managers: unattended upgrades at boot, or
	# scripts/kube/build.sh installing etcd at the same time.
	local apt=(apt_get -q -o "Dir::Cache::Archives=$cache")
	"${apt[@]}" update || die "apt-get update failed"
	for try in 1 2 3; do
		# shellcheck disable=SC2086
		"${apt[@]}" install -y --no-install-recommends --no-upgrade $(packages) && break
		[ "$try" -lt 3 ] || die "apt-get install failed 3 times"
		log "apt-get install failed (try $try); repairing and retrying"
		dpkg_configure_pending || true
	done
	rm -rf "$cache"
	restore_policy_rc "$backup"
	trap - EXIT
}

restore_policy_rc() {
	if [ -n "$1" ]; then mv -f "$1" /usr/sbin/policy-rc.d; else rm -f /usr/sbin/policy-rc.d; fi
}

# stop_package_services: Debian's postinst scripts may leave daemons running
# when policy-rc.d was not honoured (e.g. a pre-existing systemd); stop the
# packaged units so only our loopback copies run.
stop_package_services() {
	local u
	command -v systemctl >/dev/null && [ -d /run/systemd/system ] || return 0
	for u in keystone nova-api neutron-api neutron-rpc-server neutron-server cinder-api placement-api uwsgi \
		glance-api nova-conductor nova-scheduler nova-compute cinder-scheduler cinder-volume rabbitmq-server; do
		systemctl disable --now "$u" >/dev/null 2>&1 || true
	done
}

make_secrets() {
	local s
	mkdir -p "$STATE/secrets"
	chmod 700 "$STATE/secrets"
	for s in admin service db rabbit; do
		[ -s "$STATE/secrets/$s" ] || (umask 077 && openssl rand -hex 16 >"$STATE/secrets/$s")
	done
}

setup_postgres() {
	if ! pg_online; then
		# 9>&-: daemons must not inherit the lock on $STATE/.lock
		pg_ctlcluster --skip-systemctl-redirect 15 main start 9>&-
		touch "$PG_STARTED_MARK"
	fi
	local d
	if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_ROLE'")" != 1 ]; then
		psql_admin -c "CREATE ROLE $DB_ROLE LOGIN"
	fi
	# Always (re)set the password: the state dir may be new while the role is not.
	psql_admin -c "ALTER ROLE $DB_ROLE PASSWORD '$(secret db)'"
	for d in $DATABASES; do
		if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$d'")" != 1 ]; then
			psql_admin -c "CREATE DATABASE $d OWNER $DB_ROLE"
		fi
	done
}

# once NAME CMD...: runs CMD unless it already succeeded for this state dir.
once() {
	local name=$1 t0
	shift
	[ -e "$STATE/done/$name" ] && return 0
	t0=$(ts)
	"$@" >>"$STATE/log/setup.log" 2>&1 || die "$name failed; see $STATE/log/setup.log:
$(tail -n 30 "$STATE/log/setup.log")"
	touch "$STATE/done/$name"
	log "  $name: $(elapsed "$t0") s"
}

db_sync() {
	local kc=(--config-file "$STATE/etc/keystone/keystone.conf")
	local nc=(--config-file "$STATE/etc/nova/nova.conf")
	local qc=(--config-file "$STATE/etc/neutron/neutron.conf" --config-file "$STATE/etc/neutron/ml2_conf.ini")
	once keystone-db keystone-manage "${kc[@]}" db_sync
	once keystone-fernet keystone-manage "${kc[@]}" fernet_setup --keystone-user root --keystone-group root
	once keystone-credential keystone-manage "${kc[@]}" credential_setup --keystone-user root --keystone-group root
	once keystone-bootstrap keystone-manage "${kc[@]}" bootstrap \
		--bootstrap-password "$(secret admin)" --bootstrap-username admin \
		--bootstrap-project-name admin --bootstrap-role-name admin \
		--bootstrap-service-name keystone --bootstrap-region-id RegionOne \
		--bootstrap-admin-url http://127.0.0.1:5000/v3/ \
		--bootstrap-internal-url http://127.0.0.1:5000/v3/ \
		--bootstrap-public-url http://127.0.0.1:5000/v3/
	once placement-db placement-manage --config-file "$STATE/etc/placement/placement.conf" db sync
	once nova-api-db nova-manage "${nc[@]}" api_db sync
	once nova-cell0 nova-manage "${nc[@]}" cell_v2 map_cell0 --database_connection "$(db_url nova_cell0)"
	once nova-cell1 create_cell1
	once nova-db nova-manage "${nc[@]}" db sync
	once neutron-db neutron-db-manage "${qc[@]}" upgrade heads
	once cinder-db cinder-manage --config-file "$STATE/etc/cinder/cinder.conf" db sync
	if compute_on; then
		once glance-db glance-manage --config-file "$STATE/etc/glance/glance-api.conf" db_sync
	fi
	sync_cell_transport
}

create_cell1() {
	local nc=(--config-file "$STATE/etc/nova/nova.conf")
	if nova-manage "${nc[@]}" cell_v2 list_cells 2>/dev/null | grep -q ' cell1 '; then
		return 0
	fi
	nova-manage "${nc[@]}" cell_v2 create_cell --name cell1 --verbose
}

start_service() {
	local name=$1 port
	running "$name" && return 0
	rm -f "$(pidfile "$name")"
	port=$(port_of "$name")
	if [ -n "$(ss -Hltn "sport = :$port")" ]; then
		die "127.0.0.1:$port ($name) is taken by a process up.sh did not start: $(ss -Hltnp "sport = :$port")"
	fi
	if [ "$name" = glance ]; then
		setsid glance-api --config-file "$STATE/etc/glance/glance-api.conf" </dev/null >>"$STATE/log/glance.log" 2>&1 9>&- &
		echo $! >"$(pidfile glance)"
	elif [ "$name" = neutron ]; then
		setsid neutron-server --config-file "$STATE/etc/neutron/neutron.conf" \
			--config-file "$STATE/etc/neutron/ml2_conf.ini" \
			--log-file "$STATE/log/neutron.log" </dev/null >>"$STATE/log/neutron.stdout" 2>&1 9>&- &
		echo $! >"$(pidfile neutron)"
	else
		uwsgi --ini "$STATE/etc/$name/uwsgi.ini" 9>&-
		local i
		for i in $(seq 1 20); do [ -s "$(pidfile "$name")" ] && break; sleep 0.25; done
	fi
	log "  started $name (pid $(cat "$(pidfile "$name")"))"
}

start_keystone() {
	start_service keystone
	wait_answers keystone 120
}

start_apis() {
	local s
	for s in placement nova cinder neutron; do start_service "$s"; done
	for s in placement nova cinder neutron; do wait_answers "$s" 180; done
}

write_env() {
	(
		umask 077
		cat >"$STATE/env.tmp" <<EOF
# Written by scripts/openstack/up.sh; source it or use internal/testenv/osenv.
export OS_AUTH_URL='http://127.0.0.1:5000/v3'
export OS_USERNAME='admin'
export OS_PASSWORD='$(secret admin)'
export OS_PROJECT_NAME='admin'
export OS_USER_DOMAIN_NAME='Default'
export OS_PROJECT_DOMAIN_NAME='Default'
export OS_REGION_NAME='RegionOne'
export OS_IDENTITY_API_VERSION='3'
export SITE_AGENT_OS_EXTERNAL_NETWORK='public'
EOF
		if compute_on; then
			printf "# Real Nova servers (up.sh --compute): image, flavors m1.*, host\n"
			printf "export SITE_AGENT_OS_COMPUTE='1'\nexport SITE_AGENT_OS_IMAGE='%s'\nexport SITE_AGENT_OS_COMPUTE_HOST='%s'\n" \
				"$IMAGE_NAME" "$COMPUTE_HOST"
		fi >>"$STATE/env.tmp"
	)
	mv -f "$STATE/env.tmp" "$STATE/env"
	chmod 644 "$STATE/env"
}

report_rss() {
	local total=0 s pid kb
	for s in $SERVICES $(compute_on && echo "$COMPUTE_SERVICES $COMPUTE_DAEMONS"); do
		s=${s%%:*}
		pid=$(cat "$(pidfile "$s")")
		# the service's whole process tree (uwsgi workers, neutron workers)
		kb=$(ps -o rss= -p "$pid" --ppid "$pid" | awk '{ t += $1 } END { print t + 0 }')
		total=$((total + kb))
		log "  $s: pid $pid, RSS $((kb / 1024)) MB"
	done
	log "  total RSS $((total / 1024)) MB"
}

# restart_changed SUMS: stops the running services whose configuration differs from SUMS
# (md5sums of $STATE/etc before write_configs), so that they start again with the new one.
restart_changed() {
	local s name dir changed=()
	for s in $SERVICES $COMPUTE_SERVICES $COMPUTE_DAEMONS; do
		name=${s%%:*} dir=${s%%[:-]*}
		running "$name" || continue
		[ "$(grep " $STATE/etc/$dir/" <<<"$1")" = "$(conf_sums | grep " $STATE/etc/$dir/")" ] || changed+=("$name")
	done
	[ ${#changed[@]} = 0 ] || { log "  configuration changed: restarting ${changed[*]}"; stop_all "${changed[@]}"; }
}

conf_sums() { md5sum "$STATE"/etc/*/* 2>/dev/null || true; }

main() {
	[ "$(id -u)" = 0 ] || die "run as root (installs packages and starts PostgreSQL)"
	case ${1:-} in
	--compute) COMPUTE=1 ;;
	"") COMPUTE=${SITE_AGENT_OS_COMPUTE:-0} ;;
	*) die "usage: $0 [--compute]" ;;
	esac
	local t0 sums
	t0=$(ts)
	mkdir -p "$STATE"
	exec 9>"$STATE/.lock"
	flock -w 1800 9 || die "another up.sh/down.sh holds $STATE/.lock"
	[ ! -e "$COMPUTE_MARK" ] || COMPUTE=1 # until down.sh
	if all_up && { ! compute_on || compute_up; }; then
		log "already up$(compute_on && echo ' with compute') (env: $STATE/env); $(elapsed "$t0") s"
		return 0
	fi
	: >"$STATE/timings"
	if compute_on; then touch "$COMPUTE_MARK"; fi
	phase apt install_packages
	stop_package_services
	make_secrets
	mkdir -p "$STATE/log" "$STATE/run"
	if compute_on; then start_broker; fi # in the background: it starts in 10-20 s
	phase postgres setup_postgres
	sums=$(conf_sums)
	write_configs
	restart_changed "$sums"
	phase db-sync db_sync
	# Keystone first: the other APIs validate tokens with their service users.
	phase start-keystone start_keystone
	# shellcheck disable=SC2046
	phase catalog "$PY" "$HERE/bootstrap.py" catalog $(compute_on && echo --image)
	if compute_on; then phase broker ensure_broker; fi
	phase start-apis start_apis
	phase external-network "$PY" "$HERE/bootstrap.py" external-network
	if compute_on; then phase compute start_compute; fi
	phase check "$PY" "$HERE/bootstrap.py" check
	write_env
	report_rss
	log "up in $(elapsed "$t0") s; env: $STATE/env"
}

# Run main unless sourced (sourcing lets a shell exercise single phases).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
