#!/usr/bin/env bash
# Tier 2: site-agent's Vault integration against a real Vault core (vault.NewTestCluster, in
# process) from the separate test module test/vault, so the product never links Vault's server
# code (BUSL-1.1).
#
# Steps: download test/vault's modules (~860, cached by Go), tidy test/vault when the root
# module's requirements changed, build the test binary with
# `go test -c` into a cache directory keyed by the sources it depends on (test/vault's go.mod,
# go.sum and Go files, the product's go.mod, go.sum and non-test Go files), build the product
# binary and the vaultserver program (scripts/vault/server.sh, cached), then run the tests. A
# warm cache skips the compile (~7 min cold on 2 cores).
#
# Env: SITE_AGENT_CACHE (default $HOME/.cache/site-agent), RACE=1 to build with the race
#      detector (separate cache entry; much slower), FORCE=1 to rebuild regardless of the key.
# Args are passed to the test binary, e.g. scripts/vault/test.sh -test.run 'TestStore'.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MOD="$ROOT/test/vault"
CACHE="${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}/vault"
export PATH="$PATH:/usr/local/go/bin"

log() { echo "vault/test: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f s", e - s }'; }

# source_key hashes everything the test binary is built from.
source_key() {
	(
		cd "$ROOT"
		{
			printf '%s\n' test/vault/go.mod test/vault/go.sum go.mod go.sum
			find test/vault -name '*.go'
			find cmd internal -name '*.go' ! -name '*_test.go'
		} | LC_ALL=C sort | xargs sha256sum
		go version
		echo "race=${RACE:-0}"
	) | sha256sum | cut -c1-16
}

main() {
	local t0 t
	t0=$(now)
	mkdir -p "$CACHE"

	t=$(now)
	(cd "$MOD" && go mod download)
	log "go mod download: $(since "$t")"
	# The test module inherits the product's requirements through its replace: when the root
	# go.mod changes, test/vault's go.mod/go.sum may need the same update.
	if ! (cd "$MOD" && go mod tidy -diff >/dev/null 2>&1); then
		log "test/vault/go.mod or go.sum is not tidy (the root module's requirements changed?): running go mod tidy; commit the result"
		(cd "$MOD" && go mod tidy)
	fi

	local key bin variant=plain race_flag=()
	if [[ "${RACE:-0}" == 1 ]]; then
		variant=race race_flag=(-race)
	fi
	key=$(source_key)
	bin="$CACHE/vaulttest-$variant-$key.test"
	if [[ -x "$bin" && "${FORCE:-0}" != 1 ]]; then
		log "cached test binary $bin"
	else
		t=$(now)
		log "compiling the test binary (cold: ~7 min on 2 cores)"
		(cd "$MOD" && nice -n 10 go test -c "${race_flag[@]}" -o "$bin.tmp" .)
		mv -f "$bin.tmp" "$bin"
		find "$CACHE" -name "vaulttest-$variant-*.test" ! -name "$(basename "$bin")" -delete
		log "go test -c: $(since "$t") ($(du -h "$bin" | cut -f1))"
	fi

	t=$(now)
	local agent="$CACHE/site-agent"
	(cd "$ROOT" && go build -o "$agent" ./cmd/site-agent)
	log "go build ./cmd/site-agent: $(since "$t")"

	local server
	server=$("$ROOT/scripts/vault/server.sh" | tail -1)

	t=$(now)
	local status=0
	(cd "$MOD" && SITE_AGENT_BIN="$agent" SITE_AGENT_VAULT_SERVER="$server" "$bin" -test.count=1 -test.timeout=20m -test.v "$@") || status=$?
	log "tests: $(since "$t") (exit $status); total $(since "$t0")"
	return "$status"
}

main "$@"
