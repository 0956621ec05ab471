package usage

import (
	"math"
	"strings"
	"testing"
)

// Amounts that do not fit are refused with a reason, never wrapped into another amount.
func TestWholeRefusesWhatDoesNotFit(t *testing.T) {
	const maxMiB = math.MaxInt64 >> 20 // a memory quota in MiB, written in bytes
	cases := []struct {
		name          string
		amount, scale float64
		max           int64
		want          int64
		err           string
	}{
		{"GiB in MiB", 8, 1024, maxMiB, 8192, ""},
		{"cores in millicores", 1.5, 1000, math.MaxInt64, 1500, ""},
		{"largest that fits", 8589934591, 1024, maxMiB, 8589934591 * 1024, ""},
		{"2^34 GB wraps to 0 in bytes", 17179869184, 1024, maxMiB, 0, "too large (at most 8589934591)"},
		{"9e9 GB turns negative in bytes", 9e9, 1024, maxMiB, 0, "too large"},
		{"1e16 cores in millicores", 1e16, 1000, math.MaxInt64, 0, "too large (at most 9223372036854774)"},
		{"2^63 exactly", 1 << 63, 1, math.MaxInt64, 0, "too large"},
		{"negative", -1, 1, math.MaxInt32, 0, "must not be negative"},
		{"NaN", math.NaN(), 1, math.MaxInt32, 0, "not a number"},
		{"infinite", math.Inf(1), 1, math.MaxInt32, 0, "not a number"},
		{"OpenStack int32", 3e9, 1, math.MaxInt32, 0, "too large (at most 2147483647)"},
	}
	for _, c := range cases {
		got, err := Whole(c.amount, c.scale, c.max)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("%s: Whole = %d, %v; want %d", c.name, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: Whole = %d, %v; want an error saying %q", c.name, got, err, c.err)
		}
	}
	if got, err := WholeUp(1500.0/1024, 1, math.MaxInt32); err != nil || got != 2 {
		t.Errorf("WholeUp(1500 MB in GB) = %d, %v; want 2", got, err)
	}
	if got, err := WholeUp(4.0000001, 1, math.MaxInt32); err != nil || got != 4 {
		t.Errorf("WholeUp(4.0000001) = %d, %v; want 4", got, err)
	}
}
