# shellcheck shell=bash
# Real Nova servers with no hypervisor, for up.sh --compute (sourced, not executed): Glance
# (file store), nova-conductor, nova-scheduler, nova-compute with compute_driver =
# fake.FakeDriver, cinder-scheduler + cinder-volume with Cinder's test-only fake volume driver,
# a fake Open vSwitch agent row so ML2 binds ports, and the project's RabbitMQ
# (scripts/rabbitmq/up.sh) as the bus, on a vhost of its own. See README.md next to this file.

# nova-compute-ironic is the smallest package that satisfies nova-compute's hypervisor
# dependency (no libvirt daemon, no qemu); rabbitmq-server is installed here so that the one
# apt run covers it (scripts/rabbitmq/up.sh then finds it installed).
COMPUTE_PACKAGES="nova-conductor nova-scheduler nova-compute nova-compute-ironic glance-api cinder-scheduler cinder-volume rabbitmq-server"
# Daemons in start order; they have no port and log to $STATE/log/<name>.log (Glance, with a
# port, is in lib.sh's COMPUTE_SERVICES).
COMPUTE_DAEMONS="nova-conductor nova-scheduler nova-compute cinder-scheduler cinder-volume"
COMPUTE_HOST=site-agent-compute-1
IMAGE_NAME=site-agent-tiny # 1 KiB raw image (bootstrap.py compute)
VOLUME_HOST=site-agent-volume-1
RMQ_VHOST=openstack
RMQ_USER=openstack
# The broker's ports and state dir, as scripts/rabbitmq/lib.sh defines them (its STATE would
# clash with ours, so it is read in a subshell).
read -r RMQ_AMQP_PORT RMQ_STATE < <(. "$HERE/../rabbitmq/lib.sh" && echo "$AMQP_PORT $STATE")

compute_on() { [ "${COMPUTE:-0}" = 1 ]; }

# transport: the oslo.messaging URL of Nova and Cinder (fake:// without compute: casts to
# absent services go nowhere).
transport() {
	if compute_on; then
		echo "rabbit://$RMQ_USER:$(secret rabbit)@127.0.0.1:$RMQ_AMQP_PORT/$RMQ_VHOST"
	else
		echo "fake://"
	fi
}

# rmq_api METHOD PATH [JSON]: the broker's management API as its administrator (from the
# env file scripts/rabbitmq/up.sh writes).
rmq_api() {
	local env=$RMQ_STATE/env url user pass body=()
	[ -s "$env" ] || return 1
	url=$(sed -n 's/^export RABBITMQ_MGMT_URL=//p' "$env")
	user=$(sed -n 's/^export RABBITMQ_ADMIN_USER=//p' "$env")
	pass=$(sed -n 's/^export RABBITMQ_ADMIN_PASSWORD=//p' "$env")
	[ $# -lt 3 ] || body=(-H 'content-type: application/json' --data "$3")
	curl -fsS -m 10 -o /dev/null -u "$user:$pass" -X "$1" "${body[@]}" "$url/api/$2"
}

broker_ready() { rmq_api GET "permissions/$RMQ_VHOST/$RMQ_USER" 2>/dev/null; }

# start_broker: scripts/rabbitmq/up.sh in the background (idempotent; it has its own lock).
start_broker() {
	"$HERE/../rabbitmq/up.sh" >"$STATE/log/rabbitmq-up.log" 2>&1 </dev/null 9>&- &
	BROKER_PID=$!
}

# ensure_broker: waits for the broker, then makes sure of our vhost, user and permissions
# (they live in the broker's state dir and survive its restarts, not a --purge). The broker is
# shared: the tests of scripts/test-real.sh's broker lane stop and start it for an outage
# (test/e2e/events_test.go, about 20-40 s) while this runs in another lane, so the setup is
# retried for up to BROKER_WAIT seconds — without starting the broker again, which would cut
# that test's outage short.
ensure_broker() {
	[ -n "${BROKER_PID:-}" ] || start_broker
	wait "$BROKER_PID" || die "scripts/rabbitmq/up.sh failed; see $STATE/log/rabbitmq-up.log:
$(tail -n 20 "$STATE/log/rabbitmq-up.log")"
	BROKER_PID=""
	local waited=0 limit=${BROKER_WAIT:-120} step=""
	until step=$(broker_setup); do
		((waited < limit)) || die "rabbitmq: $step (the broker has not answered for $waited s; see $RMQ_STATE)"
		((waited > 0)) || log "rabbitmq: $step; the broker may be restarting for another test: retrying for up to $limit s"
		sleep 3
		waited=$((waited + 3))
	done
	((waited == 0)) || log "rabbitmq: set up after $waited s"
}

# broker_setup: our vhost, user and permissions (idempotent PUTs); on failure it prints which.
broker_setup() {
	rmq_api PUT "vhosts/$RMQ_VHOST" '{}' 2>/dev/null || { echo "cannot create vhost $RMQ_VHOST"; return 1; }
	rmq_api PUT "users/$RMQ_USER" "{\"password\": \"$(secret rabbit)\", \"tags\": \"\"}" 2>/dev/null ||
		{ echo "cannot create user $RMQ_USER"; return 1; }
	rmq_api PUT "permissions/$RMQ_VHOST/$RMQ_USER" '{"configure": ".*", "write": ".*", "read": ".*"}' 2>/dev/null ||
		{ echo "cannot grant $RMQ_USER on $RMQ_VHOST"; return 1; }
}

# nova_compute_sections: what nova.conf gains with compute (every Nova process reads it).
nova_compute_sections() {
	compute_on || return 0
	cat <<EOF

[cinder]
auth_type = password
auth_url = http://127.0.0.1:5000/v3
user_domain_name = Default
project_domain_name = Default
project_name = service
username = cinder
password = $(secret service)
os_region_name = RegionOne

# Cinder refuses a detach from Nova (409) without a service token next to the user's.
[service_user]
send_service_user_token = true
auth_type = password
auth_url = http://127.0.0.1:5000/v3
user_domain_name = Default
project_domain_name = Default
project_name = service
username = nova
password = $(secret service)
EOF
}

write_compute_confs() {
	mkdir -p "$STATE/etc/glance" "$STATE/glance/images" "$STATE/lock/glance" "$STATE/nova/instances"
	cat >"$STATE/etc/nova/nova-compute.conf" <<EOF
[DEFAULT]
host = $COMPUTE_HOST
compute_driver = fake.FakeDriver
instances_path = $STATE/nova/instances
vif_plugging_is_fatal = false
vif_plugging_timeout = 0
heal_instance_info_cache_interval = -1

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = 5
EOF
	cat >"$STATE/etc/cinder/cinder-volume.conf" <<EOF
[DEFAULT]
host = $VOLUME_HOST
enabled_backends = fake

[fake]
volume_driver = cinder.tests.fake_driver.FakeLoggingVolumeDriver
volume_backend_name = fake
target_helper = fake
EOF
	write_glance_conf
}

write_glance_conf() {
	cat >"$STATE/etc/glance/glance-api.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $(port_of glance)
workers = 0
use_stderr = true
enabled_backends = file:file
transport_url = fake://

[database]
connection = $(db_url glance)

[glance_store]
default_backend = file

[file]
filesystem_store_datadir = $STATE/glance/images

[os_glance_staging_store]
filesystem_store_datadir = $STATE/glance/staging

[os_glance_tasks_store]
filesystem_store_datadir = $STATE/glance/tasks

$(authtoken glance)

[paste_deploy]
flavor = keystone
config_file = /etc/glance/glance-api-paste.ini

$(common_sections glance)
EOF
}

# sync_cell_transport: cell1's transport URL must match nova.conf's BEFORE nova-api starts:
# nova-api caches each cell's transport at first use, and with a stale fake:// one builds
# still work (they go through the conductor) while casts to nova-compute (delete, attach)
# vanish and deletes stick in "deleting".
sync_cell_transport() {
	local want have uuid
	want=$(transport)
	have=$(psql_admin -d nova_api -c "SELECT transport_url FROM cell_mappings WHERE name = 'cell1'")
	[ "$have" = "$want" ] && return 0
	uuid=$(psql_admin -d nova_api -c "SELECT uuid FROM cell_mappings WHERE name = 'cell1'")
	[ -n "$uuid" ] || die "nova: no cell1 mapping"
	nova-manage --config-file "$STATE/etc/nova/nova.conf" cell_v2 update_cell --cell_uuid "$uuid" \
		--transport-url "$want" >>"$STATE/log/setup.log" 2>&1 || die "nova-manage update_cell failed; see $STATE/log/setup.log"
	log "  cell1 transport: ${want%%:*}"
	# A running nova-api holds the old transport: restart it.
	stop_all nova
}

# fake_ovs_agent: one neutron.agents row (fake-ovs-agent.sql) makes ML2/openvswitch bind
# ports on the compute host; without it every boot fails with PortBindingFailed.
fake_ovs_agent() {
	psql_admin -d neutron -v host="$COMPUTE_HOST" <"$HERE/fake-ovs-agent.sql"
}

# start_compute: Glance, the fake agent row, the daemons; flavors, image and quotas
# (bootstrap.py compute) while nova-compute registers.
start_compute() {
	start_service glance
	wait_answers glance 120
	fake_ovs_agent
	start_compute_daemons
	"$PY" "$HERE/bootstrap.py" compute "$IMAGE_NAME" || die "bootstrap.py compute failed"
	wait_compute
}

# start_compute_daemons: the daemons that are not running; COMPUTE_STARTED is set when
# nova-compute is (re)started, so that wait_compute waits for its fresh report.
start_compute_daemons() {
	local d extra
	COMPUTE_STARTED=""
	mkdir -p /dev/mapper # the fake volume driver copies images to /dev/mapper/<vg>-<lv>
	for d in $COMPUTE_DAEMONS; do
		running "$d" && continue
		case $d in
		nova-*) extra=(--config-file "$STATE/etc/nova/nova.conf" --config-file "$STATE/etc/nova/nova-compute.conf") ;;
		cinder-*) extra=(--config-file "$STATE/etc/cinder/cinder.conf" --config-file "$STATE/etc/cinder/cinder-volume.conf") ;;
		esac
		# use_stderr = true (nova.conf, cinder.conf): the log is the output
		setsid "$d" "${extra[@]}" </dev/null >>"$STATE/log/$d.log" 2>&1 9>&- &
		echo $! >"$(pidfile "$d")"
		log "  started $d (pid $!)"
		[ "$d" != nova-compute ] || COMPUTE_STARTED=$(date -u '+%Y-%m-%d %H:%M:%S')
	done
}

# wait_compute: nova-compute reported (after its start, when it was started now), its node
# and resource provider exist and the scheduler mapped the host to cell1 (every 5 s).
wait_compute() {
	local i d since=${COMPUTE_STARTED:-}
	[ -n "$since" ] || since=$(date -u -d '-90 seconds' '+%Y-%m-%d %H:%M:%S')
	for i in $(seq 1 360); do
		for d in $COMPUTE_DAEMONS; do
			running "$d" || die "$d exited; see $STATE/log/$d.log:
$(grep -m 5 -E 'ERROR|CRITICAL' "$STATE/log/$d.log" 2>/dev/null)"
		done
		[ "$(psql_admin -d nova -c "SELECT count(*) FROM services WHERE host = '$COMPUTE_HOST' AND \"binary\" = 'nova-compute'
			AND deleted = 0 AND updated_at > '$since'")" = 1 ] &&
			[ "$(psql_admin -d nova -c "SELECT count(*) FROM compute_nodes WHERE host = '$COMPUTE_HOST' AND deleted = 0")" = 1 ] &&
			[ "$(psql_admin -d placement -c "SELECT count(*) FROM resource_providers WHERE name = '$COMPUTE_HOST'")" = 1 ] &&
			[ "$(psql_admin -d nova_api -c "SELECT count(*) FROM host_mappings WHERE host = '$COMPUTE_HOST'")" = 1 ] && return 0
		sleep 0.5
	done
	die "compute host $COMPUTE_HOST did not register within 180 s; see $STATE/log/nova-compute.log"
}

# compute_up: the compute part answers (broker with our vhost, Glance, every daemon).
compute_up() {
	local d
	broker_ready && running glance && answers "$(port_of glance)" || return 1
	for d in $COMPUTE_DAEMONS; do running "$d" || return 1; done
}
