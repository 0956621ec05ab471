package rancher

import (
	"math"
	"testing"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
)

// FuzzQuantities covers both directions a quota amount travels. Limits (Waldur's order in
// backend units) become quantities only when they fit: what is written reads back as the same
// amount within the unit's resolution, never wrapped. Quantities Kubernetes (or Rancher's
// proxy) returns in status.used are read without panicking, as finite amounts.
func FuzzQuantities(f *testing.F) {
	f.Add(8.0, uint8(kindGiB), "3Gi")
	f.Add(1.5, uint8(kindCores), "1500m")
	f.Add(17179869184.0, uint8(kindGiB), "3.221225472G")
	f.Add(9e9, uint8(kindGiB), "9223372036854775807")
	f.Add(1e16, uint8(kindCores), "1e18")
	f.Add(-1.0, uint8(kindCount), "-1")
	f.Add(2.0, uint8(kindCount), "0.5")
	f.Add(math.MaxFloat64, uint8(kindCores), "999999999999999999999999Ei")
	f.Fuzz(func(t *testing.T, v float64, k uint8, text string) {
		kind := unitKind(k % 3)
		if q, err := toQuantity(kind, v); err == nil {
			if q.Sign() < 0 {
				t.Fatalf("%v %s became the negative quantity %s", v, kind, q.String())
			}
			back := fromQuantity(kind, q)
			resolution := map[unitKind]float64{kindCores: 0.0005, kindGiB: 1.0 / 2048, kindCount: 0}[kind]
			if math.Abs(back-v) > resolution+1e-9*math.Abs(v) {
				t.Fatalf("%v %s was written as %s, which reads back as %v", v, kind, q.String(), back)
			}
		} else if v >= 0 && v <= 1e6 && (kind != kindCount || v == math.Trunc(v)) {
			t.Fatalf("%v %s refused: %v", v, kind, err)
		}
		if q, err := rancherapi.ParseQuantity(text); err == nil {
			if got := fromQuantity(kind, q); math.IsNaN(got) {
				t.Fatalf("%q read as NaN", text)
			}
		}
	})
}
