package usage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// twoTo63 is 2^63, the first float64 an int64 cannot hold (float64(math.MaxInt64) rounds to it).
const twoTo63 = float64(1 << 63)

// Whole converts an amount to a whole number of sub-units (amount × scale, rounded to the nearest
// whole number) that must not exceed max, for a limit about to become a backend quantity (a
// Kubernetes quota in millicores or MiB, an OpenStack quota). Converting without checking wraps:
// 17179869184 GB written as bytes is 2^64, which int64 holds as 0; 1e16 cores in millicores is
// -9223372036854775808m. The error says why in words a customer can act on, and names the
// largest amount that fits.
func Whole(amount, scale float64, max int64) (int64, error) {
	return whole(amount, scale, max, math.Round)
}

// WholeUp is Whole rounding up (a quota never grants less than was ordered); a tolerance of 1e-6
// absorbs float noise (4.0000001 → 4).
func WholeUp(amount, scale float64, max int64) (int64, error) {
	return whole(amount, scale, max, func(v float64) float64 { return math.Ceil(v - 1e-6) })
}

func whole(amount, scale float64, max int64, round func(float64) float64) (int64, error) {
	switch {
	case math.IsNaN(amount) || math.IsInf(amount, 0):
		return 0, errors.New("is not a number")
	case amount < 0:
		return 0, errors.New("must not be negative")
	}
	v := round(amount * scale)
	if v >= twoTo63 || v > float64(max) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("is too large (at most %s)", strconv.FormatFloat(largest(scale, max), 'f', -1, 64))
	}
	return int64(v), nil
}

// largest is the largest whole amount whose scaled value fits.
func largest(scale float64, max int64) float64 {
	a := math.Floor(float64(max) / scale)
	for a > 0 && (a*scale >= twoTo63 || a*scale > float64(max)) {
		a = math.Floor(math.Nextafter(a, 0))
	}
	return a
}
