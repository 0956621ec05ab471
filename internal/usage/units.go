package usage

import (
	"math"
	"strconv"

	"github.com/waldur/site-agent/internal/backends"
)

// LimitsToBackend converts limits in Waldur units to backend units: backend = waldur ×
// unit_factor. Components the offering does not configure pass through unchanged.
func LimitsToBackend(waldur backends.Quantities, comps backends.Components) backends.Quantities {
	if waldur == nil {
		return nil
	}
	out := make(backends.Quantities, len(waldur))
	for name, v := range waldur {
		out[name] = v * factor(comps, name, false)
	}
	return out
}

// LimitsToWaldur is the inverse of LimitsToBackend. Waldur stores limits as whole numbers, so
// values are rounded to the nearest integer.
func LimitsToWaldur(backend backends.Quantities, comps backends.Components) backends.Quantities {
	if backend == nil {
		return nil
	}
	out := make(backends.Quantities, len(backend))
	for name, v := range backend {
		out[name] = math.Round(v / factor(comps, name, false))
	}
	return out
}

// UsageToWaldur converts measured usage from backend units to Waldur units using
// unit_factor_reporting when set, else unit_factor, and rounds to two decimals.
func UsageToWaldur(backend backends.Quantities, comps backends.Components) backends.Quantities {
	out := make(backends.Quantities, len(backend))
	for name, v := range backend {
		out[name] = Round2(v / factor(comps, name, true))
	}
	return out
}

func factor(comps backends.Components, name string, reporting bool) float64 {
	c, ok := comps.Get(name)
	if !ok {
		return 1
	}
	if reporting && c.UnitFactorReporting > 0 {
		return c.UnitFactorReporting
	}
	if c.UnitFactor > 0 {
		return c.UnitFactor
	}
	return 1
}

// Round2 rounds to two decimals the way the incumbent's Python round(v, 2) does: on the exact
// binary value, ties to even (1.005 → 1.0 because 1.005 is stored as 1.00499…; 0.125 → 0.12).
func Round2(v float64) float64 {
	r, _ := strconv.ParseFloat(Amount(v), 64)
	return r
}

// Amount formats an amount for Waldur's usage endpoints: exactly two decimals.
func Amount(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Close reports whether two amounts are equal within the tolerance the incumbent used
// (relative 1e-9, absolute 1e-6).
func Close(a, b float64) bool {
	diff := math.Abs(a - b)
	return diff <= math.Max(1e-9*math.Max(math.Abs(a), math.Abs(b)), 1e-6)
}

// SameQuantities reports whether a and b have the same keys and Close amounts.
func SameQuantities(a, b backends.Quantities) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !Close(v, w) {
			return false
		}
	}
	return true
}
