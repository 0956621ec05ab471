package testenv

import "testing"

// SkipUnderRace skips t when the race detector is on, naming why: for benchmarks, whose figures
// mean nothing under it.
func SkipUnderRace(t testing.TB, why string) {
	t.Helper()
	if RaceEnabled {
		t.Skip("skipped under -race: " + why)
	}
}
