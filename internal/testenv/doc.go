// Package testenv holds what the real-server test helpers (kubeenv, osenv) share: the switch
// that keeps `go test ./...` hermetic. Real-server tests run only when SITE_AGENT_REAL_TESTS=1
// (scripts/test-real.sh sets it) or SITE_AGENT_REQUIRE_REAL=1 (the same, and a missing server is
// a failure instead of a skip). RaceEnabled and SkipUnderRace let a benchmark step aside under
// -race, where its figures mean nothing. It is for tests only.
// Its tests also cover scripts/lib/apt.sh, the lock wait every apt and dpkg call of the tier-2
// scripts goes through.
package testenv
