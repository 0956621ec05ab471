# shellcheck shell=bash disable=SC2034
# Shared definitions for up.sh, down.sh and restart.sh (sourced, not executed).

STATE=${SITE_AGENT_RMQ_STATE:-/var/tmp/site-agent-rabbitmq}
# Ports on 127.0.0.1, away from RabbitMQ's defaults so a packaged broker cannot clash.
AMQP_PORT=${SITE_AGENT_RMQ_AMQP_PORT:-5682}
STOMP_PORT=${SITE_AGENT_RMQ_STOMP_PORT:-61623}
WS_PORT=${SITE_AGENT_RMQ_WS_PORT:-15684}
MGMT_PORT=${SITE_AGENT_RMQ_MGMT_PORT:-15682}
DIST_PORT=${SITE_AGENT_RMQ_DIST_PORT:-25682}
NODENAME=siteagent@localhost
PACKAGES="rabbitmq-server curl"
SERVER=/usr/lib/rabbitmq/bin/rabbitmq-server
CTL=/usr/lib/rabbitmq/bin/rabbitmqctl

log() { printf '[rabbitmq %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

# rmq_env: the environment every RabbitMQ command of ours runs with (private config, data,
# logs, node name and Erlang cookie under $STATE; everything on loopback).
rmq_env() {
	export HOME="$STATE/home"
	export RABBITMQ_CONFIG_FILE="$STATE/etc/rabbitmq.conf"
	export RABBITMQ_ENABLED_PLUGINS_FILE="$STATE/etc/enabled_plugins"
	export RABBITMQ_MNESIA_BASE="$STATE/mnesia"
	export RABBITMQ_LOG_BASE="$STATE/log"
	export RABBITMQ_NODENAME=$NODENAME
	export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
	export RABBITMQ_NODE_PORT=$AMQP_PORT
	export RABBITMQ_DIST_PORT=$DIST_PORT
	export ERL_EPMD_ADDRESS=127.0.0.1
	export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
	export RABBITMQ_PID_FILE="$STATE/run/rabbitmq.pid"
}

pid_of_server() { cat "$STATE/run/server.pid" 2>/dev/null; }

# running: true when the launcher we started is alive (its environment names our state dir).
running() {
	local pid
	pid=$(pid_of_server) || return 1
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
	tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx -- "RABBITMQ_MNESIA_BASE=$STATE/mnesia"
}

admin_pass() { cat "$STATE/secrets/admin" 2>/dev/null; }

# answers: the management API answers an authenticated overview, and the Web-STOMP port accepts.
answers() {
	curl -fs -o /dev/null -m 3 -u "siteagent:$(admin_pass)" "http://127.0.0.1:$MGMT_PORT/api/overview" || return 1
	(exec 3<>"/dev/tcp/127.0.0.1/$WS_PORT") 2>/dev/null || return 1
	(exec 3<>"/dev/tcp/127.0.0.1/$STOMP_PORT") 2>/dev/null
}

# wait_answers LIMIT: waits until the broker answers; fails early if it died.
wait_answers() {
	local limit=$1 t0
	t0=$(date +%s)
	until answers; do
		running || die "rabbitmq-server exited; see $STATE/log/server.out:
$(tail -n 30 "$STATE/log/server.out" 2>/dev/null)"
		[ $(($(date +%s) - t0)) -lt "$limit" ] || die "rabbitmq did not answer within ${limit}s; see $STATE/log/"
		sleep 0.3
	done
}

# stop_server: SIGTERM to the Erlang VM (RabbitMQ shuts down cleanly on it; the launcher
# script then exits), wait up to 30 s, then SIGKILL the launcher's process group.
stop_server() {
	local pid beam i
	running || { rm -f "$STATE/run/server.pid"; return 0; }
	pid=$(pid_of_server)
	beam=$(pgrep -P "$pid" -x beam.smp || true)
	kill -TERM ${beam:-$pid} 2>/dev/null || true
	for i in $(seq 1 60); do
		[ -d "/proc/$pid" ] || break
		sleep 0.5
	done
	if [ -d "/proc/$pid" ]; then
		log "rabbitmq-server (pid $pid) ignored SIGTERM; sending SIGKILL"
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$STATE/run/server.pid"
	log "stopped rabbitmq-server (pid $pid)"
}
