package rancher

import (
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"gopkg.in/inf.v0"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/waldur/site-agent/internal/secret"
)

// Each of the extreme texts below is a valid quantity on which ScaledValue (and so Value and
// MilliValue) computes ten to the power of about a billion or more: without the bounds this
// test runs into the test binary's timeout.
func TestScaled(t *testing.T) {
	for _, c := range []struct {
		text  string
		scale resource.Scale
		want  int64
		ok    bool
	}{
		{"1500m", resource.Milli, 1500, true},
		{"1.5", 0, 2, true},
		{"-1.5", 0, -1, true},
		{"1.0001", resource.Milli, 1001, true},
		{"3Gi", 0, 3 << 30, true},
		{"1Ei", 0, 1 << 60, true},
		{"-9223372036854775808", 0, math.MinInt64, true},
		{"-9223372036854775809", 0, 0, false},
		{"9223372036854775807", 0, math.MaxInt64, true},
		{"9223372036854775808", 0, 0, false},
		{"9223372036854775807", resource.Milli, 0, false},
		{"9223372036854775.807", resource.Milli, math.MaxInt64, true},
		{"9223372036854775.8071", resource.Milli, 0, false},
		{"9223372036854776", resource.Milli, 0, false},
		{"1e18", 0, 1e18, true},
		{"1e19", 0, 0, false},
		{"0e1000000000000", resource.Milli, 0, true},
		{"0e-1000000000000", 0, 0, true},
		{"0e2147483647", 0, 0, true},
		{"1e1000000000", resource.Milli, 0, false},
		{"5e1000000000", 0, 0, false},
		{"1e-20", 0, 1, true},
		{"1e-20", resource.Nano, 1, true},
		{"123456789012345678901234567890e-29", 0, 2, true},
	} {
		q, err := resource.ParseQuantity(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		got, ok := Scaled(q, c.scale)
		if got != c.want || ok != c.ok {
			t.Errorf("Scaled(%s, %d) = %d, %v; want %d, %v", c.text, c.scale, got, ok, c.want, c.ok)
		}
	}
	// ParseQuantity rounds a non-zero amount up to a nano (and itself computes ten to the
	// power of a huge negative exponent's distance, so such a text never reaches here), but a
	// Quantity made in code keeps any scale.
	for _, c := range []struct {
		unscaled int64
		scale    inf.Scale
		want     int64
		ok       bool
		float    float64
	}{{1, 2147483647, 1, true, 0}, {-1, 2000000000, 0, true, 0}, {7, -2000000000, 0, false, math.MaxFloat64}} {
		q := resource.NewDecimalQuantity(*inf.NewDec(c.unscaled, c.scale), resource.DecimalSI)
		if got, ok := Scaled(*q, resource.Milli); got != c.want || ok != c.ok {
			t.Errorf("Scaled(%de%d) = %d, %v; want %d, %v", c.unscaled, -c.scale, got, ok, c.want, c.ok)
		}
		if got := Float(*q); got != c.float {
			t.Errorf("Float(%de%d) = %v; want %v", c.unscaled, -c.scale, got, c.float)
		}
	}
}

func TestFloat(t *testing.T) {
	long := "1" + strings.Repeat("0", 401) // with exponent -400: 10, beyond float64 as a mantissa
	for _, c := range []struct {
		text string
		want float64
	}{
		{"1.5", 1.5},
		{"1500m", 1.5},
		{"1Ki", 1024},
		{"-2.5Gi", -2.5 * (1 << 30)},
		{"0e1000000000000", 0},
		{"0e-1000000000000", 0},
		{"1e400", math.MaxFloat64},
		{"-1e400", -math.MaxFloat64},
		{"1e1000000000", math.MaxFloat64},
		{"1e-400", 1e-9}, // ParseQuantity rounds a non-zero amount up to a nano
		{long + "e-400", 10},
	} {
		q, err := resource.ParseQuantity(c.text)
		if err != nil {
			t.Fatalf("%.40s: %v", c.text, err)
		}
		if got := Float(q); got != c.want {
			t.Errorf("Float(%.40s) = %v; want %v", c.text, got, c.want)
		}
	}
}

func TestParseQuantity(t *testing.T) {
	for text, ok := range map[string]bool{
		"1e18": true, "5e-3": true, "1e+1000": true, "1e-1000": true, "1E": true, "2Ei": true, "1.5E3": true,
		"1e1001": false, "1e-1001": false, "0e1000000000000": false, "1e-2000000000": false,
		"1e99999999999999999999": false, "1E-99999": false, "1e+1001": false,
	} {
		if _, err := ParseQuantity(text); (err == nil) != ok {
			t.Errorf("ParseQuantity(%s): %v", text, err)
		}
	}
}

// FuzzScaled holds Scaled and Float against exact rational arithmetic on quantities of any
// digits and any scale (made as a Dec, as a decoder may make them: ParseQuantity itself hangs
// on some), and Scaled against ScaledValue where that one neither overflows nor hangs.
func FuzzScaled(f *testing.F) {
	for _, c := range []struct {
		digits string
		exp    int32
	}{{"15", 2}, {"-15", 1}, {"9223372036854775807", 0}, {"-9223372036854775808", 0}, {"1", -20},
		{"0", 2000000000}, {"123456789012345678901234567890", -29}, {"7", 1000000000}, {"1", -2147483647}} {
		f.Add(c.digits, c.exp, int8(0))
		f.Add(c.digits, c.exp, int8(-3))
	}
	f.Fuzz(func(t *testing.T, digits string, exp int32, scale int8) {
		u, ok := new(big.Int).SetString(digits, 10)
		if !ok || len(digits) > 400 {
			return
		}
		q := *resource.NewDecimalQuantity(*inf.NewDecBig(u, inf.Scale(-exp)), resource.DecimalSI)
		got, ok := Scaled(q, resource.Scale(scale))
		fl := Float(q)
		// q / 10^scale = u × 10^e
		e := int64(exp) - int64(scale)
		if e < -1000 || e > 1000 { // too far to compute exactly: the signs and bounds
			switch {
			case u.Sign() == 0:
				if got != 0 || !ok || fl != 0 {
					t.Fatalf("zero read as %d, %v, %v", got, ok, fl)
				}
			case e > 0:
				if ok || fl != float64(u.Sign())*math.MaxFloat64 {
					t.Fatalf("%se%d read as %d, %v, %v", digits, exp, got, ok, fl)
				}
			case !ok || got != int64(max(u.Sign(), 0)) || math.Abs(fl) > 1e-300:
				t.Fatalf("%se%d read as %d, %v, %v", digits, exp, got, ok, fl)
			}
			return
		}
		exact := new(big.Rat).SetInt(u)
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(e)), nil))
		if e >= 0 {
			exact.Mul(exact, p)
		} else {
			exact.Quo(exact, p)
		}
		ceil := new(big.Int).Quo(exact.Num(), exact.Denom()) // truncated toward zero
		if exact.Sign() > 0 && !exact.IsInt() {
			ceil.Add(ceil, big.NewInt(1))
		}
		if ok != ceil.IsInt64() || ok && got != ceil.Int64() {
			t.Fatalf("Scaled(%se%d, %d) = %d, %v; exactly %s", digits, exp, scale, got, ok, ceil)
		}
		// For negative amounts ScaledValue's two representations disagree with each other and
		// with ceil (int64: -1.5 → -2; inf.Dec: -1.5 → 0); no quota or capacity is negative.
		if ok && u.Sign() >= 0 && len(digits) < 40 && exp > -100 {
			if sv := q.ScaledValue(resource.Scale(scale)); sv != got {
				t.Fatalf("Scaled(%se%d, %d) = %d; ScaledValue %d", digits, exp, scale, got, sv)
			}
		}
		if scale == 0 {
			want, _ := exact.Float64()
			if math.IsInf(want, 0) {
				want = float64(exact.Sign()) * math.MaxFloat64
			}
			if fl != want {
				t.Fatalf("Float(%se%d) = %v; exactly %v", digits, exp, fl, want)
			}
		}
	})
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// A cluster's capacity is Rancher's text: extreme or overflowing amounts are refused with the
// key named, at once, and ordinary ones read exactly.
func TestClusterCapacityBoundsQuantities(t *testing.T) {
	capacity := map[string]string{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v3/clusters/c-1" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c-1", "type": "cluster", "nodeCount": 2, "capacity": capacity})
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{URL: srv.URL, Token: secret.New("token-x:y"), Upstream: fast(0), Transport: srv.Client().Transport}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		capacity map[string]string
		want     Capacity
		err      string
	}{
		{map[string]string{"cpu": "7500m", "memory": "16Gi", "ephemeral-storage": "1e12"},
			Capacity{Nodes: 2, CPUMillis: 7500, MemoryBytes: 16 << 30, StorageBytes: 1e12}, ""},
		{map[string]string{"cpu": "0e1000000000000"}, Capacity{}, `capacity cpu "0e1000000000000": exponent beyond ±1000`},
		{map[string]string{"memory": "1e-2000000000"}, Capacity{}, `capacity memory "1e-2000000000": exponent beyond ±1000`},
		{map[string]string{"cpu": "9223372036854776"}, Capacity{}, "capacity cpu \"9223372036854776\": beyond what an int64 counts"},
		{map[string]string{"ephemeral-storage": "-1"}, Capacity{}, "capacity ephemeral-storage \"-1\": beyond what an int64 counts, or negative"},
	} {
		capacity = tc.capacity
		got, err := c.ClusterCapacity(ctxT(t), "c-1")
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: %+v, %v", tc.capacity, got, err)
		}
	}
}
