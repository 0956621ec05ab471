#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager from the tools/kube module (k8s.io/kubernetes
# from the Go module proxy) into a version-keyed cache directory, and makes sure etcd is installed.
# Idempotent: skips the build when both binaries exist and the stamp (version + sha256 of
# tools/kube/go.sum) matches. Go's module and build caches stay in their normal locations.
#
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), KUBE_VERSION (default v1.36.3),
#      FORCE=1 to rebuild regardless of the stamp.
# Output: the last line of stdout is the binary directory (for SITE_AGENT_KUBE_BIN).
set -euo pipefail

start=$(date +%s)
KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MOD_DIR="$ROOT/tools/kube"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}"
BIN_DIR="$CACHE/kube/$KUBE_VERSION"
STAMP_FILE="$BIN_DIR/.stamp"
BINARIES=(kube-apiserver kube-controller-manager)

log() { echo "kube/build: $*" >&2; }

ensure_etcd() {
	if command -v etcd >/dev/null 2>&1; then
		log "etcd present: $(command -v etcd)"
		return
	fi
	if [[ "$(id -u)" -ne 0 ]]; then
		log "etcd is missing; install it as root: apt-get install -y --no-install-recommends etcd-server"
		return
	fi
	log "installing Debian etcd-server"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck source=../lib/apt.sh
	. "$ROOT/scripts/lib/apt.sh"
	# apt_get waits (bounded) while another apt/dpkg holds a lock, e.g. scripts/openstack/up.sh
	# installing its packages at the same time.
	if ! apt_get install -y --no-install-recommends etcd-server >&2; then
		apt_get update >&2
		apt_get install -y --no-install-recommends etcd-server >&2
	fi
}

gomod_version() {
	awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' "$MOD_DIR/go.mod"
}

build() {
	local ver_minor="${KUBE_VERSION#v1.}"
	ver_minor="${ver_minor%%.*}"
	local ldflags="-s -w"
	ldflags+=" -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
	ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
	ldflags+=" -X k8s.io/component-base/version.gitMinor=$ver_minor"
	ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
	BUILD_TMP="$(mktemp -d "$CACHE/kube/.build.XXXXXX")"
	trap 'rm -rf "$BUILD_TMP"' EXIT
	log "building ${BINARIES[*]} $KUBE_VERSION (this takes ~10 min on 2 cores when cold)"
	(
		cd "$MOD_DIR"
		GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" CGO_ENABLED=0 nice -n 10 \
			go build -ldflags "$ldflags" -o "$BUILD_TMP/" \
			k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	)
	mkdir -p "$BIN_DIR"
	for b in "${BINARIES[@]}"; do
		mv -f "$BUILD_TMP/$b" "$BIN_DIR/$b"
	done
}

main() {
	if [[ "$(gomod_version)" != "$KUBE_VERSION" ]]; then
		log "tools/kube/go.mod requires $(gomod_version), not $KUBE_VERSION; run scripts/kube/gen-gomod.sh $KUBE_VERSION"
		exit 1
	fi
	ensure_etcd
	mkdir -p "$CACHE/kube"
	local want
	want="$KUBE_VERSION $(sha256sum "$MOD_DIR/go.sum" | cut -d' ' -f1)"
	local fresh=1
	for b in "${BINARIES[@]}"; do
		[[ -x "$BIN_DIR/$b" ]] || fresh=0
	done
	if [[ "$fresh" -eq 1 && "${FORCE:-0}" != 1 && -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$want" ]]; then
		log "cached binaries are up to date"
	else
		build
		echo "$want" >"$STAMP_FILE"
	fi
	for b in "${BINARIES[@]}"; do
		log "$(du -h "$BIN_DIR/$b" | cut -f1) $BIN_DIR/$b"
	done
	log "done in $(($(date +%s) - start)) s; export SITE_AGENT_KUBE_BIN=$BIN_DIR"
	echo "$BIN_DIR"
}

main "$@"
