# shellcheck shell=bash
# Config file generation for up.sh (sourced). Every file lives under
# $STATE/etc; the packages' own /etc files are only read for api-paste.ini.

secret() { cat "$STATE/secrets/$1"; }

db_url() { echo "postgresql+psycopg2://$DB_ROLE:$(secret db)@127.0.0.1:5432/$1"; }

# authtoken SERVICE_USER: the [keystone_authtoken] section every API uses.
authtoken() {
	cat <<EOF
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000/
auth_url = http://127.0.0.1:5000/
auth_type = password
user_domain_name = Default
project_domain_name = Default
project_name = service
username = $1
password = $(secret service)
region_name = RegionOne
service_token_roles_required = true
EOF
}

common_sections() {
	cat <<EOF
[oslo_concurrency]
lock_path = $STATE/lock/$1

[oslo_messaging_notifications]
driver = noop

[oslo_policy]
enforce_scope = false
enforce_new_defaults = false
EOF
}

# uwsgi_ini NAME WSGI_FILE PROCESSES ENV...: an ini that serves one WSGI API
# on 127.0.0.1 in the background, with a pidfile and a log in the state dir.
uwsgi_ini() {
	local name=$1 wsgi=$2 procs=$3 e
	shift 3
	{
		cat <<EOF
[uwsgi]
plugins = python3
master = true
http-socket = 127.0.0.1:$(port_of "$name")
wsgi-file = $wsgi
processes = $procs
threads = 1
lazy-apps = true
need-app = true
die-on-term = true
vacuum = true
buffer-size = 65535
post-buffering = 65536
add-header = Connection: close
pidfile = $(pidfile "$name")
daemonize = $STATE/log/$name.log
EOF
		for e in "$@"; do echo "env = $e"; done
	} >"$STATE/etc/$name/uwsgi.ini"
}

write_keystone_conf() {
	cat >"$STATE/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
use_stderr = true

[database]
connection = $(db_url keystone)

[identity]
# bcrypt's minimum: token issue and user creation cost ~5 ms, not ~250 ms.
# Loopback test server only.
password_hash_rounds = 4

[token]
provider = fernet
expiration = 14400

[fernet_tokens]
key_repository = $STATE/keystone/fernet-keys

[fernet_receipts]
key_repository = $STATE/keystone/fernet-keys

[credential]
key_repository = $STATE/keystone/credential-keys

$(common_sections keystone)
EOF
	uwsgi_ini keystone /usr/bin/keystone-wsgi-public 2 \
		"OS_KEYSTONE_CONFIG_DIR=$STATE/etc/keystone" "OS_KEYSTONE_CONFIG_FILES=keystone.conf"
}

write_placement_conf() {
	cat >"$STATE/etc/placement/placement.conf" <<EOF
[DEFAULT]
use_stderr = true

[api]
auth_strategy = keystone

[placement_database]
connection = $(db_url placement)

$(authtoken placement)

$(common_sections placement)
EOF
	uwsgi_ini placement /usr/bin/placement-api 1 "OS_PLACEMENT_CONFIG_DIR=$STATE/etc/placement"
}

write_nova_conf() {
	cat >"$STATE/etc/nova/nova.conf" <<EOF
[DEFAULT]
use_stderr = true
my_ip = 127.0.0.1
state_path = $STATE/nova
transport_url = $(transport)
enabled_apis = osapi_compute

[api]
auth_strategy = keystone

[api_database]
connection = $(db_url nova_api)

[database]
connection = $(db_url nova)

$(authtoken nova)

[placement]
auth_type = password
auth_url = http://127.0.0.1:5000/v3
user_domain_name = Default
project_domain_name = Default
project_name = service
username = placement
password = $(secret service)
region_name = RegionOne

[neutron]
auth_type = password
auth_url = http://127.0.0.1:5000/v3
user_domain_name = Default
project_domain_name = Default
project_name = service
username = neutron
password = $(secret service)
region_name = RegionOne
$(nova_compute_sections)

$(common_sections nova)
EOF
	# nova-api-wsgi loads its paste pipeline from the first config file.
	cp /etc/nova/api-paste.ini "$STATE/etc/nova/api-paste.ini"
	uwsgi_ini nova /usr/bin/nova-api-wsgi 2 \
		"OS_NOVA_CONFIG_DIR=$STATE/etc/nova" "OS_NOVA_CONFIG_FILES=api-paste.ini;nova.conf"
}

write_cinder_conf() {
	cat >"$STATE/etc/cinder/cinder.conf" <<EOF
[DEFAULT]
use_stderr = true
my_ip = 127.0.0.1
state_path = $STATE/cinder
transport_url = $(transport)
auth_strategy = keystone
api_paste_config = /etc/cinder/api-paste.ini

[database]
connection = $(db_url cinder)

$(authtoken cinder)

$(common_sections cinder)
EOF
	uwsgi_ini cinder /usr/bin/cinder-wsgi 1
	echo "pyargv = --config-file $STATE/etc/cinder/cinder.conf" >>"$STATE/etc/cinder/uwsgi.ini"
}

write_neutron_conf() {
	cat >"$STATE/etc/neutron/neutron.conf" <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $(port_of neutron)
core_plugin = ml2
service_plugins = router
auth_strategy = keystone
transport_url = fake://
state_path = $STATE/neutron
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
allow_overlapping_ips = true
dhcp_agent_notification = false
# Nova learns of port changes (floating IPs in a server's addresses) only with these.
notify_nova_on_port_status_changes = $(compute_on && echo true || echo false)
notify_nova_on_port_data_changes = $(compute_on && echo true || echo false)
api_paste_config = /etc/neutron/api-paste.ini

[database]
connection = $(db_url neutron)

$(authtoken neutron)

[nova]
auth_type = password
auth_url = http://127.0.0.1:5000/v3
user_domain_name = Default
project_domain_name = Default
project_name = service
username = nova
password = $(secret service)
region_name = RegionOne

$(common_sections neutron)
EOF
	cat >"$STATE/etc/neutron/ml2_conf.ini" <<EOF
[ml2]
type_drivers = flat,vxlan
tenant_network_types = vxlan
mechanism_drivers = openvswitch
extension_drivers = port_security

[ml2_type_flat]
flat_networks = extnet

[ml2_type_vxlan]
vni_ranges = 1:1000

[securitygroup]
enable_security_group = true
EOF
}

write_configs() {
	local s
	for s in keystone placement nova cinder neutron; do
		mkdir -p "$STATE/etc/$s" "$STATE/lock/$s" "$STATE/$s"
	done
	mkdir -p "$STATE/log" "$STATE/run" "$STATE/done" "$STATE/keystone/fernet-keys" "$STATE/keystone/credential-keys"
	write_keystone_conf
	write_placement_conf
	write_nova_conf
	write_cinder_conf
	write_neutron_conf
	if compute_on; then write_compute_confs; fi
	chmod -R go-rwx "$STATE/etc"
}
