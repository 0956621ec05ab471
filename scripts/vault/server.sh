#!/usr/bin/env bash
# Builds test/vault/vaultserver — a real Vault core (vault.NewTestCluster) served on a loopback
# port, for the main module's end-to-end tests (the rke2 world's Vault in tier 2) — into
# $SITE_AGENT_CACHE/vault (default ~/.cache/site-agent/vault), keyed by what it is built from
# (test/vault's go.mod, go.sum and vaultserver sources, the root go.mod and go.sum, whose
# requirements take part in test/vault's module graph, and the Go version). A cached binary is
# reused; the cold build takes ≈7 min on 2 cores (it shares Go's build cache with
# scripts/vault/test.sh). The last line of the output is the binary's path:
#   SITE_AGENT_VAULT_SERVER="$(scripts/vault/server.sh | tail -1)"
# Env: FORCE=1 to rebuild regardless of the key.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MOD="$ROOT/test/vault"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}/vault"
export PATH="$PATH:/usr/local/go/bin"

log() { echo "vault/server: $*" >&2; }

key() {
	(
		cd "$ROOT"
		{
			printf '%s\n' test/vault/go.mod test/vault/go.sum go.mod go.sum
			find test/vault/vaultserver -name '*.go'
		} | LC_ALL=C sort | xargs sha256sum
		go version
	) | sha256sum | cut -c1-16
}

mkdir -p "$CACHE"
bin="$CACHE/vaultserver-$(key)"
if [[ -x "$bin" && "${FORCE:-0}" != 1 ]]; then
	log "cached $bin"
else
	t0=$(date +%s)
	log "building (cold: ≈7 min on 2 cores)"
	(cd "$MOD" && go mod download && nice -n 10 go build -o "$bin.tmp" ./vaultserver)
	mv -f "$bin.tmp" "$bin"
	find "$CACHE" -name 'vaultserver-*' ! -name "$(basename "$bin")" -delete
	log "built in $(($(date +%s) - t0)) s ($(du -h "$bin" | cut -f1))"
fi
echo "$bin"
