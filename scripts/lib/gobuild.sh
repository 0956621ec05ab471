# shellcheck shell=bash
# Builds a Go tool from the module proxy into a version-keyed cache (sourced, not executed):
# the shared part of scripts/helm/build.sh and scripts/kwok/build.sh.
#
# gobuild NAME VERSION PACKAGE LDFLAGS STAMP NOTE [VERSION-CMD...]: builds PACKAGE@VERSION as
# $SITE_AGENT_CACHE/NAME/VERSION/NAME (default cache $HOME/.cache/site-agent) with -ldflags
# LDFLAGS, unless that binary exists with STAMP in its .stamp (FORCE=1 rebuilds). NOTE says how
# long a build takes; VERSION-CMD (run as binary VERSION-CMD) is logged after a build. Prints the
# binary's path on the last line of stdout; logs go to stderr.
gobuild() {
	local name=$1 version=$2 pkg=$3 ldflags=$4 want=$5 note=$6
	shift 6
	local dir="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}/$name/$version"
	local bin="$dir/$name" stamp="$dir/.stamp" start tmp
	export PATH="$PATH:/usr/local/go/bin"
	if [ "${FORCE:-0}" != 1 ] && [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		echo "$name/build: cached: $bin" >&2
		echo "$bin"
		return 0
	fi
	start=$(date +%s)
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.build.XXXXXX")
	# shellcheck disable=SC2064 # expand $tmp now: it is local
	trap "rm -rf '$tmp'" EXIT
	echo "$name/build: building $name $version from the module proxy ($note)" >&2
	GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install -trimpath -ldflags "$ldflags" "$pkg@$version"
	mv "$tmp/$name" "$bin"
	echo "$want" >"$stamp"
	echo "$name/build: built in $(($(date +%s) - start)) s: $(if [ $# -gt 0 ]; then "$bin" "$@"; else echo "$bin"; fi)" >&2
	echo "$bin"
}
