#!/usr/bin/env bash
# The project's test command (the README's second line; CI runs it through .ci/run).
#   tier 1: formatting, vet, the hermetic suite with the race detector (simulators only),
#           short fuzzing of config and Waldur-response decoding;
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

if [ "${SITE_AGENT_SKIP_REAL:-0}" != 1 ]; then
  step "real-server tier"
  ./scripts/test-real.sh
fi
echo
echo "all tests passed"
