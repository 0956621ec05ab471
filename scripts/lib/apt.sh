# shellcheck shell=bash
# apt and dpkg that wait for each other (sourced, not executed). Fresh machines often run
# unattended upgrades at boot, and the tier-2 scripts install packages concurrently (up.sh in the
# background while scripts/kube/build.sh installs etcd): a second apt-get or dpkg then fails at
# once on a held lock. apt-get's own DPkg::Lock::Timeout covers only the dpkg frontend lock, not
# the package lists lock (apt-get update) or the archives lock, and dpkg has no wait at all; so
# every call here is repeated while it fails only because a lock is held, for a bounded time.
#
# Env: SITE_AGENT_APT_LOCK_TIMEOUT  seconds to wait in all (default 900)
#      SITE_AGENT_APT_LOCK_POLL     seconds between attempts (default 5)

# Messages of apt (lists, archives, frontend locks) and dpkg (frontend, database locks).
APT_LOCK_HELD='Could not get lock|Unable to lock directory|Unable to acquire the dpkg frontend lock|lock was locked by another process|is locked by another process'

# with_lock_wait CMD...: runs CMD; while it fails because another apt or dpkg holds a lock,
# waits and runs it again, until SITE_AGENT_APT_LOCK_TIMEOUT has passed. CMD's stdout and stderr
# pass through. In CMD, APT_LOCK_LEFT holds the seconds left. Returns CMD's status.
with_lock_wait() {
	local timeout=${SITE_AGENT_APT_LOCK_TIMEOUT:-900} poll=${SITE_AGENT_APT_LOCK_POLL:-5}
	local start=$SECONDS errf rc=0 waited=0
	errf=$(mktemp)
	while :; do
		APT_LOCK_LEFT=$((timeout - (SECONDS - start)))
		[ "$APT_LOCK_LEFT" -gt 0 ] || APT_LOCK_LEFT=0
		{ "$@" 2>&1 1>&3 3>&- | tee "$errf" >&2; rc=${PIPESTATUS[0]}; } 3>&1 || true
		if [ "$rc" -eq 0 ] || ! grep -Eq "$APT_LOCK_HELD" "$errf"; then
			break
		fi
		if [ $((SECONDS - start)) -ge "$timeout" ]; then
			echo "apt: gave up after ${timeout}s waiting for another apt/dpkg to release its lock (SITE_AGENT_APT_LOCK_TIMEOUT)" >&2
			break
		fi
		[ "$waited" = 1 ] || echo "apt: another apt/dpkg holds a lock (unattended upgrades?); waiting up to ${timeout}s" >&2
		waited=1
		sleep "$poll"
	done
	rm -f "$errf"
	return "$rc"
}

_apt_get_once() { apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_LEFT" "$@"; }

# apt_get ARGS...: apt-get ARGS, waiting (bounded) for other package managers.
apt_get() { with_lock_wait _apt_get_once "$@"; }

# dpkg_configure_pending: dpkg --configure -a (finish interrupted installs), waiting likewise.
dpkg_configure_pending() { with_lock_wait dpkg --configure -a; }
