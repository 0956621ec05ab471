# shellcheck shell=bash disable=SC2034
# Shared definitions for up.sh and down.sh (sourced, not executed).

STATE=${SITE_AGENT_OS_STATE:-/var/tmp/site-agent-openstack}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3 # Debian's interpreter: the OpenStack modules live there, not in a pyenv
DB_ROLE=siteagent_os
DATABASES="keystone placement nova_api nova nova_cell0 neutron cinder glance"
# Services in start order: name port.
SERVICES="keystone:5000 placement:8778 nova:8774 cinder:8776 neutron:9696"
# The compute part's API (up.sh --compute; compute.sh has its daemons).
COMPUTE_SERVICES="glance:9292"

ts() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(ts)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '[openstack %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

# phase NAME CMD...: runs CMD and logs how long it took.
phase() {
	local name=$1 t0
	shift
	t0=$(ts)
	log "phase $name: start"
	"$@"
	log "phase $name: done in $(elapsed "$t0") s"
	printf '%s %s\n' "$name" "$(elapsed "$t0")" >>"$STATE/timings"
}

port_of() {
	local s
	for s in $SERVICES $COMPUTE_SERVICES; do
		[ "${s%%:*}" = "$1" ] && { echo "${s##*:}"; return; }
	done
	die "unknown service $1"
}

pidfile() { echo "$STATE/run/$1.pid"; }

# running NAME: true when the pid in NAME's pidfile is alive and is the
# process we started (its command line mentions our state dir).
running() {
	local pf pid
	pf=$(pidfile "$1")
	[ -s "$pf" ] || return 1
	pid=$(cat "$pf")
	[ -d "/proc/$pid" ] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$STATE"
}

# answers PORT: true when the API root answers with any 2xx/3xx status.
answers() {
	local code
	code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$1/") || return 1
	case $code in 2?? | 3??) return 0 ;; *) return 1 ;; esac
}

# wait_answers NAME TIMEOUT: waits until NAME's API answers; fails early if
# the process died.
wait_answers() {
	local name=$1 limit=$2 port t0
	port=$(port_of "$name")
	t0=$(date +%s)
	until answers "$port"; do
		running "$name" || die "$name exited; see $STATE/log/$name.log:
$(tail -n 20 "$STATE/log/$name.log" 2>/dev/null)"
		[ $(($(date +%s) - t0)) -lt "$limit" ] || die "$name did not answer on 127.0.0.1:$port within ${limit}s; see $STATE/log/$name.log"
		sleep 0.5
	done
}

any_alive() {
	local pid
	for pid in "$@"; do [ -d "/proc/$pid" ] && return 0; done
	return 1
}

# stop_all NAME...: sends SIGTERM to every listed service that is running,
# waits up to 20 s for all of them, SIGKILLs stragglers, removes pidfiles.
stop_all() {
	local name pid i pids=() names=()
	for name in "$@"; do
		if running "$name"; then
			pid=$(cat "$(pidfile "$name")")
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
			names+=("$name")
		fi
	done
	for i in $(seq 1 40); do
		any_alive "${pids[@]}" || break
		sleep 0.5
	done
	for i in "${!pids[@]}"; do
		if [ -d "/proc/${pids[$i]}" ]; then
			log "${names[$i]} (pid ${pids[$i]}) ignored SIGTERM; sending SIGKILL"
			kill -KILL "${pids[$i]}" 2>/dev/null || true
		fi
		log "stopped ${names[$i]} (pid ${pids[$i]})"
	done
	for name in "$@"; do rm -f "$(pidfile "$name")"; done
}

psql_admin() { runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qAt "$@"; }

pg_online() { pg_lsclusters -h 2>/dev/null | awk '$1 == 15 && $2 == "main" { print $4 }' | grep -q online; }
