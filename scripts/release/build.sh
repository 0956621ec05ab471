#!/usr/bin/env bash
# `make release`: for each of linux/amd64 and linux/arm64, the static binary (CGO_ENABLED=0,
# -trimpath, version-stamped with the Makefile's LDFLAGS), then into dist/:
#   site-agent_<V>_linux_<arch>.tar.gz   binary, systemd units and sysusers file, examples, docs
#   site-agent_<V>-1_<arch>.deb, site-agent-<V>-1.<rpm arch>.rpm   (scripts/release/nfpm.yaml)
#   site-agent_<V>_linux_<arch>.cdx.json the CycloneDX SBOM of the binary's build information
#   SHA256SUMS                           over all of them
# <V> is the package version made from VERSION (git describe): v1.2.3 → 1.2.3, v1.2.3-4-gabc →
# 1.2.3+4.gabc, an untagged commit → 0.0.0~git<commit time>.<describe>. The files' times are the
# commit's (SOURCE_DATE_EPOCH). Tools: scripts/release/tools.sh (built from the module proxy, cached).
# Env: VERSION, LDFLAGS (default: the Makefile's), RELEASE_ARCHES (default "amd64 arm64"),
#      DIST (default dist; emptied first).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
VERSION="${VERSION:-$(make -s --no-print-directory print-VERSION)}"
LDFLAGS="${LDFLAGS:-$(make -s --no-print-directory print-LDFLAGS)}"
ARCHES="${RELEASE_ARCHES:-amd64 arm64}"
DIST="${DIST:-dist}"
log() { echo "release: $*" >&2; }
t0=$(date +%s)

SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
export SOURCE_DATE_EPOCH

# pkg_version VERSION: a version dpkg and rpm order correctly (no "-", starts with a digit).
pkg_version() {
	local v=${1#v} sep
	if [[ $v =~ ^([0-9]+(\.[0-9]+)*)(-(.+))?$ ]]; then
		[ -z "${BASH_REMATCH[4]}" ] && { echo "$v"; return; }
		sep="+" # 1.2.3-4-gabc: after the tag
		[[ ${BASH_REMATCH[4]} =~ ^[0-9] ]] || sep="~" # 1.2.3-rc1: before it
		echo "${BASH_REMATCH[1]}$sep${BASH_REMATCH[4]//-/.}"
		return
	fi
	echo "0.0.0~git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S).${v//-/.}"
}
PKG_VERSION=$(pkg_version "$VERSION")
export PKG_VERSION

tools_log=$(mktemp)
stage_root=$(mktemp -d)
trap 'rm -rf "$stage_root" "$tools_log"' EXIT
# The tools compile (when not cached) while the binaries do.
scripts/release/tools.sh >"$tools_log" 2>&1 &
tools_pid=$!

rm -rf "$DIST"
mkdir -p "$DIST"
for arch in $ARCHES; do
	mkdir -p "$stage_root/$arch"
	log "building linux/$arch $VERSION"
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch nice -n 5 go build -trimpath -ldflags "$LDFLAGS" \
		-o "$stage_root/$arch/site-agent" ./cmd/site-agent
done
if ! wait "$tools_pid"; then
	cat "$tools_log" >&2
	exit 1
fi
{ read -r NFPM; read -r CYCLONEDX; } < <(grep -v '^release/tools:' "$tools_log")

# nfpm's configuration with a link per incumbent name appended to `contents`.
nfpm_config="$stage_root/nfpm.yaml"
{
	cat scripts/release/nfpm.yaml
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/release/incumbent-names | while read -r name; do
		printf '  - src: site-agent\n    dst: /usr/bin/%s\n    type: symlink\n' "$name"
	done
} >"$nfpm_config"

for arch in $ARCHES; do
	stage="$stage_root/$arch"
	name="site-agent_${PKG_VERSION}_linux_$arch"
	top="$stage/tar/$name"
	mkdir -p "$top/systemd" "$top/examples" "$top/docs"
	cp "$stage/site-agent" "$top/"
	cp README.md "$top/"
	[ ! -f LICENSE ] || cp LICENSE "$top/"
	cp docs/migration.md "$top/docs/"
	cp systemd/site-agent.service systemd/site-agent@.service systemd/site-agent.sysusers.conf systemd/site-agent.default "$top/systemd/"
	cp configs/*.yaml "$top/examples/"
	chmod -R u=rwX,go=rX "$top"
	tar -C "$stage/tar" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -cf - "$name" |
		gzip -n -9 >"$DIST/$name.tar.gz"

	for packager in deb rpm; do
		STAGE="$stage" GOARCH=$arch "$NFPM" package --config "$nfpm_config" --packager "$packager" --target "$DIST/" >&2
	done

	# Licences are read from the module cache the build filled (GOPROXY=off: the main module,
	# which is not published, is not looked up); its warnings show only when it fails.
	if ! GOOS=linux GOARCH=$arch GOPROXY=off "$CYCLONEDX" bin -json -licenses -version "$VERSION" \
		-output "$DIST/$name.cdx.json" "$stage/site-agent" 2>"$stage/sbom.log"; then
		cat "$stage/sbom.log" >&2
		exit 1
	fi
	log "linux/$arch done"
done

(cd "$DIST" && sha256sum -- *.tar.gz *.deb *.rpm *.cdx.json >SHA256SUMS)
log "$DIST/ in $(($(date +%s) - t0)) s:"
(cd "$DIST" && ls -l --time-style=+ -- * | awk '{printf "  %10d  %s\n", $5, $NF}') >&2
