#!/usr/bin/env bash
# Builds the site-agent OCI image with no registry: the static binary FROM scratch, with the
# host's CA bundle and a passwd/group naming the non-root user nonroot (65532).
#   scripts/container/build.sh [IMAGE]      (default localhost/site-agent:test)
# Needs buildah and podman (Debian packages buildah, podman, runc). Prints the image name on the last line.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
IMAGE="${1:-localhost/site-agent:test}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
CA="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
log() { echo "container/build: $*" >&2; }

command -v buildah >/dev/null || { log "buildah is missing: install the Debian packages buildah, podman and runc (scripts/container/test.sh does, as root)"; exit 1; }
[ -r "$CA" ] || { log "CA bundle $CA not found: install the Debian package ca-certificates or set CA_BUNDLE"; exit 1; }

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
root="$ctx/rootfs"
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
log "building the static binary ($VERSION)"
CGO_ENABLED=0 go build -trimpath -ldflags "$(make -s --no-print-directory print-LDFLAGS VERSION="$VERSION")" \
  -o "$root/usr/local/bin/site-agent" ./cmd/site-agent
# The incumbent's command names, as the packages install them (the binary answers to each).
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/release/incumbent-names | while read -r name; do
  ln -s site-agent "$root/usr/local/bin/$name"
done
cp "$CA" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
cp scripts/container/Containerfile "$ctx/Containerfile"
log "building $IMAGE"
buildah bud --quiet --format oci --layers=false -f "$ctx/Containerfile" -t "$IMAGE" "$ctx" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$IMAGE" 2>/dev/null || echo "?")
log "image $IMAGE: $size bytes (binary $(stat -c %s "$root/usr/local/bin/site-agent") bytes)"
echo "$IMAGE"
