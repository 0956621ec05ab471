package testenv

import (
	"errors"
	"testing"
)

func TestGate(t *testing.T) {
	cases := []struct {
		real, require string
		open          bool
	}{{"", "", false}, {"1", "", true}, {"", "1", true}, {"0", "0", false}}
	for _, c := range cases {
		t.Setenv(EnvRealTests, c.real)
		t.Setenv(EnvRequireReal, c.require)
		err := Gate()
		if (err == nil) != c.open || (err != nil && !errors.Is(err, ErrNotRealTier)) {
			t.Errorf("real=%q require=%q: %v", c.real, c.require, err)
		}
	}
}
