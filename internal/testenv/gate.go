package testenv

import (
	"errors"
	"os"
)

// Environment variables of the real-server tier.
const (
	EnvRealTests   = "SITE_AGENT_REAL_TESTS"
	EnvRequireReal = "SITE_AGENT_REQUIRE_REAL"
)

// ErrNotRealTier is returned by Gate outside the real-server tier.
var ErrNotRealTier = errors.New("real-server test: run scripts/test-real.sh, or set " + EnvRealTests + "=1 with the servers available")

// Gate reports whether real-server tests may run in this process.
func Gate() error {
	if os.Getenv(EnvRealTests) == "1" || os.Getenv(EnvRequireReal) == "1" {
		return nil
	}
	return ErrNotRealTier
}
