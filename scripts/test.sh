#!/usr/bin/env bash
# The project's test command (the README's second line; CI runs it through .ci/run).
#   tier 1: formatting, vet, the hermetic suite with the race detector (simulators only),
#           short fuzzing of config and Waldur-response decoding, and of what customers and
#           upstreams control (order attributes, events, Link, vault: references, the import
#           manifest, STOMP frames, Kubernetes quantities);
#   tier 2: real-server tests (scripts/test-real.sh) unless SITE_AGENT_SKIP_REAL=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"

step() { printf '\n== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi

step "go vet"
go vet ./...

step "go test -race (hermetic tier)"
go test -race -count=1 -timeout 20m ./...

step "fuzzing (short)"
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime "${FUZZTIME:-15s}" ./internal/config/
go test -run '^$' -fuzz '^FuzzDecodeOrders$' -fuzztime "${FUZZTIME:-15s}" ./internal/waldurclient/
# what customers and upstreams control (docs/security.md): shorter each, to keep CI time in hand;
# new inputs are minimised for at most 1 s (the 60 s default ate whole runs of the heavier ones)
fuzz_each="${FUZZTIME_EACH:-5s}"
while read -r target pkg; do
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzz_each" -fuzzminimizetime 1s "$pkg" </dev/null
done <<'TARGETS'
FuzzOrderAttributes ./internal/backends/rke2/
FuzzEventBodies ./internal/modes/
FuzzLinkHeader ./internal/waldurclient/
FuzzParseRef ./internal/clients/vault/
FuzzTransformManifest ./internal/vclusters/
FuzzStompFrames ./internal/stomp/
FuzzQuantities ./internal/backends/rancher/
TARGETS

if [ "${SITE_AGENT_SKIP_REAL:-0}" != 1 ]; then
  step "real-server tier"
  ./scripts/test-real.sh
fi
echo
echo "all tests passed"
