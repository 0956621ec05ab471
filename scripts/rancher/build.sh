#!/usr/bin/env bash
# Builds a real Rancher server (v2.12.0) from its source, and the kube-apiserver and
# kube-controller-manager of the same module graph (k8s.io/kubernetes v1.33.1), into a
# version-keyed cache directory. Dependencies come from the Go module proxy; the Rancher module
# itself is not served there, so its source comes from, in this order:
#   1. RANCHER_SRC (a checkout or an unpacked archive of the tag),
#   2. $CACHE/rancher/src/$RANCHER_VERSION (kept from an earlier run),
#   3. a shallow clone of https://github.com/rancher/rancher at the tag, as a user's machine does.
# With none of them the script prints a loud notice naming how to provide the source and exits 3:
# the caller (scripts/test-real.sh) then skips the real-Rancher tests and says so.
#
# Only v2.12.0 builds here: later tags need module versions the proxy refuses (wrangler/v3 v3.3.5,
# steve v0.6.53, dynamiclistener v0.7.7, ...).
#
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), RANCHER_VERSION (default v2.12.0),
#      RANCHER_SRC, FORCE=1 to rebuild.
# Output: the last line of stdout is the binary directory (rancher, kube-apiserver,
# kube-controller-manager), for SITE_AGENT_RANCHER_BIN.
set -euo pipefail

start=$(date +%s)
RANCHER_VERSION="${RANCHER_VERSION:-v2.12.0}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}"
SRC_CACHE="$CACHE/rancher/src/$RANCHER_VERSION"
BIN_DIR="$CACHE/rancher/$RANCHER_VERSION"
# Bump BUILD_REV when the build itself changes (flags, binaries): the stamp keys the cache.
BUILD_REV=1
STAMP="$RANCHER_VERSION rev$BUILD_REV"
BINARIES=(rancher kube-apiserver kube-controller-manager)

log() { echo "rancher/build: $*" >&2; }

fresh() {
	local b
	for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
	[[ -f "$BIN_DIR/.stamp" && "$(cat "$BIN_DIR/.stamp")" == "$STAMP" && "${FORCE:-0}" != 1 ]]
}

# source_tree prints the directory holding the Rancher source of the tag, fetching it if needed.
source_tree() {
	if [[ -n "${RANCHER_SRC:-}" ]]; then
		[[ -f "$RANCHER_SRC/go.mod" ]] || { log "RANCHER_SRC=$RANCHER_SRC has no go.mod"; return 1; }
		echo "$RANCHER_SRC"
		return
	fi
	if [[ -f "$SRC_CACHE/go.mod" ]]; then
		echo "$SRC_CACHE"
		return
	fi
	log "cloning https://github.com/rancher/rancher at $RANCHER_VERSION"
	local tmp
	tmp="$(mktemp -d "$CACHE/rancher/.src.XXXXXX")"
	if timeout 600 git clone -q --depth 1 --branch "$RANCHER_VERSION" https://github.com/rancher/rancher "$tmp" >&2 2>/dev/null; then
		rm -rf "$tmp/.git"
		mkdir -p "$(dirname "$SRC_CACHE")"
		mv "$tmp" "$SRC_CACHE"
		echo "$SRC_CACHE"
		return
	fi
	rm -rf "$tmp"
	return 1
}

build() {
	local src=$1
	BUILD_TMP="$(mktemp -d "$CACHE/rancher/.build.XXXXXX")"
	trap 'rm -rf "$BUILD_TMP"' EXIT
	local tmp=$BUILD_TMP
	export GOFLAGS="-mod=mod -modcacherw -buildvcs=false -trimpath" GONOSUMDB='*' GOSUMDB=off CGO_ENABLED=0
	# The tree is the tag's: go.mod's toolchain line must not make Go fetch another toolchain.
	export GOTOOLCHAIN=local
	log "building rancher $RANCHER_VERSION from $src (about 17 min on 2 cores when cold)"
	(cd "$src" && nice -n 10 go build -tags k8s -ldflags "-s -w \
		-X github.com/rancher/rancher/pkg/version.Version=$RANCHER_VERSION \
		-X github.com/rancher/rancher/pkg/version.GitCommit=$RANCHER_VERSION" -o "$tmp/rancher" .)
	local kv
	kv=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$src/go.mod")
	local minor=${kv#v1.}
	minor=${minor%%.*}
	log "building kube-apiserver and kube-controller-manager $kv from the same module graph"
	(cd "$src" && nice -n 10 go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$kv \
		-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
		-X k8s.io/component-base/version.gitTreeState=clean" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
	mkdir -p "$BIN_DIR"
	local b
	for b in "${BINARIES[@]}"; do mv -f "$tmp/$b" "$BIN_DIR/$b"; done
	echo "$kv" >"$BIN_DIR/.kube-version"
	echo "$STAMP" >"$BIN_DIR/.stamp"
}

main() {
	mkdir -p "$CACHE/rancher"
	if fresh; then
		log "cached binaries are up to date"
	else
		local src
		if ! src=$(source_tree); then
			cat >&2 <<-EOF
			################################################################################
			rancher/build: NO RANCHER SOURCE: the real-Rancher tests cannot run.
			  github.com cannot be reached, RANCHER_SRC is not set and $SRC_CACHE is empty.
			  Provide the source of rancher/rancher at tag $RANCHER_VERSION, e.g.
			    RANCHER_SRC=/path/to/rancher ./scripts/test-real.sh
			  or unpack it into $SRC_CACHE.
			################################################################################
			EOF
			exit 3
		fi
		build "$src"
	fi
	log "done in $(($(date +%s) - start)) s; export SITE_AGENT_RANCHER_BIN=$BIN_DIR"
	echo "$BIN_DIR"
}

main "$@"
