#!/usr/bin/env bash
# Builds the release tools from the Go module proxy into a version-keyed cache (kept out of the
# product's go.mod) and prints their paths, one a line: nfpm (.deb and .rpm), then
# cyclonedx-gomod (the SBOM). Idempotent: a tool whose binary exists is not rebuilt. Both build
# at once when missing (≈3–4 min cold on 2 cores, mostly downloads and compiling).
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), NFPM_VERSION (default v2.45.0: later
#      versions need go.digitalxero.dev modules the proxy refuses), CYCLONEDX_GOMOD_VERSION
#      (default v1.10.0), FORCE=1 to rebuild.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}"
NFPM_VERSION="${NFPM_VERSION:-v2.45.0}"
CYCLONEDX_GOMOD_VERSION="${CYCLONEDX_GOMOD_VERSION:-v1.10.0}"
log() { echo "release/tools: $*" >&2; }

# tool_path NAME VERSION: where the cached binary is; build_tool NAME VERSION PACKAGE builds it.
tool_path() { echo "$CACHE/tools/$1/$2/$1"; }
build_tool() {
	local name=$1 version=$2 pkg=$3 dir tmp start
	dir="$CACHE/tools/$name/$version"
	if [ "${FORCE:-0}" != 1 ] && [ -x "$dir/$name" ]; then
		log "cached: $dir/$name"
		return 0
	fi
	start=$(date +%s)
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.build.XXXXXX")
	log "building $name $version from the module proxy"
	if ! GOBIN="$tmp" GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go install -trimpath -ldflags "-s -w" "$pkg@$version" >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		rm -rf "$tmp"
		log "building $name $version failed"
		return 1
	fi
	mv "$tmp/$name" "$dir/$name"
	rm -rf "$tmp"
	log "built $name $version in $(($(date +%s) - start)) s"
}

build_tool nfpm "$NFPM_VERSION" github.com/goreleaser/nfpm/v2/cmd/nfpm &
nfpm_pid=$!
build_tool cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod &
cdx_pid=$!
status=0
wait "$nfpm_pid" || status=1
wait "$cdx_pid" || status=1
[ "$status" = 0 ] || exit 1
tool_path nfpm "$NFPM_VERSION"
tool_path cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION"
