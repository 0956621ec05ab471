package rancher

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantities from Kubernetes and Rancher are untrusted text. Any number of digits and any
// decimal exponent make a valid quantity ("0e1000000000000"), and apimachinery computes ten to
// the power of an exponent's distance where it scales one: ParseQuantity, rounding a non-zero
// amount up to a nano ("1e-2000000000"), and ScaledValue, Value and MilliValue, scaling any
// ("0e1000000000000": a fuzzed input hung a worker) — minutes of CPU and gigabytes for one
// value. ScaledValue also overflows silently. ParseQuantity, Scaled and Float here cost no more
// than the digits of the text. Upstream, kubernetes/kubernetes#141306 (open when this was
// written) bounds ParseQuantity's own rounding; it does not touch ScaledValue.

// maxExponent bounds the decimal exponent ParseQuantity accepts; Kubernetes writes at most e18.
const maxExponent = 1000

var ten = big.NewInt(10)

// ParseQuantity parses a quantity as resource.ParseQuantity does, refusing a decimal exponent
// beyond ±maxExponent.
func ParseQuantity(text string) (resource.Quantity, error) {
	if i := strings.LastIndexAny(text, "eE"); i >= 0 && hugeExponent(text[i+1:]) {
		return resource.Quantity{}, fmt.Errorf("exponent beyond ±%d", maxExponent)
	}
	return resource.ParseQuantity(text)
}

// hugeExponent reports whether s is a signed integer beyond ±maxExponent.
func hugeExponent(s string) bool {
	e, err := strconv.ParseInt(s, 10, 64)
	return errors.Is(err, strconv.ErrRange) || err == nil && (e > maxExponent || e < -maxExponent)
}

// Scaled returns ceil(q / 10^scale), as resource.Quantity.ScaledValue does for amounts ≥ 0, and
// whether it fits an int64. (For negative amounts ScaledValue rounds away from zero or toward
// it, depending on how the quantity is held; Scaled rounds every amount up.)
func Scaled(q resource.Quantity, scale resource.Scale) (int64, bool) {
	d := q.AsDec() // q is a copy: promoting it to a Dec changes nothing of the caller's
	u := d.UnscaledBig()
	if u.Sign() == 0 {
		return 0, true
	}
	// q / 10^scale = u × 10^e
	e := -int64(d.Scale()) - int64(scale)
	if e >= 0 {
		if e > 18 { // |u| ≥ 1, so |u × 10^e| ≥ 10^19 > MaxInt64
			return 0, false
		}
		return fits(new(big.Int).Mul(u, new(big.Int).Exp(ten, big.NewInt(e), nil)))
	}
	// |u| < 2^BitLen ≤ 10^(BitLen·log10 2): divided by more powers of ten, 0 < |q| < 1.
	if float64(-e) > float64(u.BitLen())*math.Log10(2)+1 {
		if u.Sign() > 0 {
			return 1, true
		}
		return 0, true
	}
	// DivMod is Euclidean: for a positive divisor, the floor and a remainder ≥ 0.
	quo, rem := new(big.Int).DivMod(u, new(big.Int).Exp(ten, big.NewInt(-e), nil), new(big.Int))
	if rem.Sign() != 0 {
		quo.Add(quo, big.NewInt(1))
	}
	return fits(quo)
}

func fits(v *big.Int) (int64, bool) {
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

// Float returns the float64 nearest to q; beyond float64's range, the largest finite one of q's
// sign.
func Float(q resource.Quantity) float64 {
	d := q.AsDec()
	u := d.UnscaledBig()
	if u.Sign() == 0 {
		return 0
	}
	// strconv reads any number of digits and caps the exponent it accumulates: exact rounding
	// at a cost bounded by the digits.
	f, _ := strconv.ParseFloat(u.String()+"e"+strconv.FormatInt(-int64(d.Scale()), 10), 64)
	if math.IsInf(f, 0) {
		return float64(u.Sign()) * math.MaxFloat64
	}
	return f
}
