package testenv

import "testing"

// RemotedialerRace explains SkipUnderRace for tests that open and close remotedialer tunnels.
const RemotedialerRace = "rancher/remotedialer v0.6.1 races on a connection's error field when a session closes " +
	"while the connection writes (fixed upstream by rancher/remotedialer#261 in v0.6.2, which needs Go 1.27); " +
	"this test runs in the non-race pass of scripts/test.sh"

// SkipUnderRace skips t when the race detector is on, naming why: for tests whose only race
// reports come from a dependency's known, unfixed-in-our-pinned-version race.
func SkipUnderRace(t testing.TB, why string) {
	t.Helper()
	if RaceEnabled {
		t.Skip("skipped under -race: " + why)
	}
}
