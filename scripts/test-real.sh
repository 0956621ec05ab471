#!/usr/bin/env bash
# Tier 2: tests against real servers that run on this machine. Each server is installed or built
# by its own script (cached between runs) and the tests are run with SITE_AGENT_REQUIRE_REAL=1,
# so a missing server fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export SITE_AGENT_REQUIRE_REAL=1
echo "no real-server suites yet"
