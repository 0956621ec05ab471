# shellcheck shell=bash
# The stop sequence of the tier-2 down.sh scripts (sourced after the service's lib.sh, which
# defines STATE, log and die): argument parsing, the state dir's lock, and --purge.

# down_args ARGS...: reads [--purge] into $purge (true or false).
down_args() {
	purge=false
	case ${1:-} in
	--purge) purge=true ;;
	"") ;;
	*) die "usage: $0 [--purge]" ;;
	esac
}

# down_lock: exits 0 when $STATE does not exist; otherwise takes $STATE/.lock on fd 9 (the lock
# up.sh holds while it starts things).
down_lock() {
	[ -d "$STATE" ] || {
		log "nothing to stop: $STATE does not exist"
		exit 0
	}
	exec 9>"$STATE/.lock"
	flock -w 600 9 || die "another up.sh/down.sh holds $STATE/.lock"
}

# down_done: with --purge, releases the lock and deletes $STATE; then logs "down".
down_done() {
	if $purge; then
		exec 9>&-
		rm -rf "$STATE"
		log "removed $STATE"
	fi
	log "down"
}
