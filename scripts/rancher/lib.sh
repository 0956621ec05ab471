# shellcheck shell=bash disable=SC2034
# Shared definitions for up.sh and down.sh (sourced, not executed).

STATE=${SITE_AGENT_RANCHER_STATE:-/var/tmp/site-agent-rancher}
# Ports on 127.0.0.1, below the ephemeral range (32768–60999 here): a port in it can be taken by
# any outgoing connection (a run once found etcd unable to bind 47380). Rancher also listens on
# :6666 and /tmp/log.sock, which it hard-codes.
ETCD_PORT=${SITE_AGENT_RANCHER_ETCD_PORT:-27379}
ETCD_PEER_PORT=${SITE_AGENT_RANCHER_ETCD_PEER_PORT:-27380}
KUBE_PORT=${SITE_AGENT_RANCHER_KUBE_PORT:-27643}
HTTP_PORT=${SITE_AGENT_RANCHER_HTTP_PORT:-27080}
HTTPS_PORT=${SITE_AGENT_RANCHER_HTTPS_PORT:-27443}
PROCS="etcd kube-apiserver kube-controller-manager rancher"

log() { printf '[rancher %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

pid_of() { cat "$STATE/run/$1.pid" 2>/dev/null; }

# alive NAME: the process we started under NAME runs (its command line names our state dir or binary).
alive() {
	local pid
	pid=$(pid_of "$1") || return 1
	[ -n "$pid" ] && [ -d "/proc/$pid" ]
}

admin_token() { cat "$STATE/secrets/admin.token" 2>/dev/null; }

# answers: Rancher answers /ping and the admin token reads the local cluster as active.
answers() {
	[ "$(curl -sk -m 3 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$HTTPS_PORT/ping")" = 200 ] || return 1
	[ "$(curl -sk -m 5 -H "Authorization: Bearer $(admin_token)" "https://127.0.0.1:$HTTPS_PORT/v3/clusters/local" |
		sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')" = active ]
}

# stop_all: stops every process up.sh started (process groups), newest first.
stop_all() {
	local p pid
	for p in rancher kube-controller-manager kube-apiserver etcd; do
		pid=$(pid_of "$p") || continue
		[ -n "$pid" ] || continue
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	done
	for _ in $(seq 1 100); do
		local any=0
		for p in $PROCS; do alive "$p" && any=1; done
		[ "$any" = 0 ] && break
		sleep 0.1
	done
	for p in $PROCS; do
		pid=$(pid_of "$p") || continue
		[ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$STATE/run/$p.pid"
	done
}
