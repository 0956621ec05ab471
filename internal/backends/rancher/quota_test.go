package rancher

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

func TestQuotaMap(t *testing.T) {
	want := map[string]string{
		"cpu": "limits.cpu cores", "ram": "limits.memory GiB", "storage": "requests.storage GiB",
		"gpu": "requests.nvidia.com/gpu count", "gpu_h100": "requests.nvidia.com/gpu-h100 count",
	}
	// "memory" (the legacy name fallback) clashes with ram; "pods" is no quota.
	if _, err := buildQuotaMap(append(testComps, backends.Component{Name: "memory"})); err == nil ||
		!strings.Contains(err.Error(), "backend_components.ram: maps to the quota key limits.memory, like component memory") {
		t.Fatalf("legacy memory + ram: %v", err)
	}
	m, err := buildQuotaMap(append(testComps, backends.Component{Name: "cpu_legacy"}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range m {
		got[k.Component] = string(k.Key) + " " + k.Kind.String()
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("quota map (-want +got):\n%s", d)
	}
	legacy, err := buildQuotaMap(backends.Components{{Name: "cpu"}, {Name: "memory"}, {Name: "storage"}, {Name: "gpu"}})
	if err != nil || len(legacy) != 4 {
		t.Fatalf("components named like the incumbent's fallback keys: %v %v", legacy, err)
	}
}

func TestToQuantity(t *testing.T) {
	cases := []struct {
		kind unitKind
		v    float64
		want string
	}{
		{kindCores, 4, "4"}, // the incumbent wrote "4000m": the same quantity
		{kindCores, 1.5, "1500m"},
		{kindCores, 0.001, "1m"},
		{kindGiB, 8, "8Gi"}, // "8192Mi" in the incumbent's YAML
		{kindGiB, 0.5, "512Mi"},
		{kindGiB, 100, "100Gi"},
		{kindGiB, 1.3, "1331Mi"},
		{kindCount, 2, "2"},
		{kindCount, 0, "0"},
	}
	for _, tc := range cases {
		q, err := toQuantity(tc.kind, tc.v)
		if err != nil || q.String() != tc.want {
			t.Errorf("toQuantity(%s, %v) = %s, %v; want %s", tc.kind, tc.v, q.String(), err, tc.want)
		}
		incumbent := map[unitKind]string{kindCores: "4000m", kindGiB: "8192Mi"}
		if s, ok := incumbent[tc.kind]; ok && tc.v == map[unitKind]float64{kindCores: 4, kindGiB: 8}[tc.kind] && q.Cmp(resource.MustParse(s)) != 0 {
			t.Errorf("%v %s differs from the incumbent's %s", tc.v, tc.kind, s)
		}
	}
	for _, bad := range []struct {
		kind unitKind
		v    float64
	}{{kindCores, -1}, {kindGiB, math.NaN()}, {kindCount, 1.5}, {kindCount, math.Inf(1)}} {
		if _, err := toQuantity(bad.kind, bad.v); err == nil {
			t.Errorf("toQuantity(%s, %v) accepted", bad.kind, bad.v)
		}
	}
}

func TestFromQuantity(t *testing.T) {
	cases := []struct {
		kind unitKind
		in   string
		want float64
	}{
		// the incumbent's parser tests
		{kindCores, "5000m", 5}, {kindCores, "5", 5}, {kindGiB, "3Gi", 3}, {kindGiB, "3072Mi", 3}, {kindGiB, "10Gi", 10},
		{kindCount, "2", 2}, {kindCount, "4", 4},
		// what the incumbent got wrong: bytes, Ki and decimal suffixes
		{kindGiB, "1073741824", 1}, {kindGiB, "1048576Ki", 1}, {kindGiB, "2G", 2e9 / (1 << 30)}, {kindCores, "250m", 0.25},
		{kindGiB, "0", 0},
	}
	for _, tc := range cases {
		if got := fromQuantity(tc.kind, resource.MustParse(tc.in)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("fromQuantity(%s, %s) = %v, want %v", tc.kind, tc.in, got, tc.want)
		}
	}
}

// An upstream's ResourceQuota may hold any valid quantity text; decoded as the backend decodes
// it, each is read as a finite amount at once. ScaledValue (MilliValue, Value) computed ten to
// the power of "0e1000000000000"'s exponent: this test hung until the test binary's timeout.
func TestQuotaReadsExtremeQuantities(t *testing.T) {
	body := `{"kind":"ResourceQuota","apiVersion":"v1","status":{"used":{` +
		`"limits.cpu":"0e1000000000000","limits.memory":"0e1000000000000","requests.storage":"1e1000000000",` +
		`"requests.nvidia.com/gpu":"-1e1000000000","requests.nvidia.com/gpu-h100":"1e400"}}}`
	var rq corev1.ResourceQuota
	if err := json.Unmarshal([]byte(body), &rq); err != nil {
		t.Fatal(err)
	}
	m, err := buildQuotaMap(testComps)
	if err != nil {
		t.Fatal(err)
	}
	want := backends.Quantities{"cpu": 0, "ram": 0, "storage": math.MaxFloat64 / gib,
		"gpu": -math.MaxFloat64, "gpu_h100": math.MaxFloat64}
	if d := cmp.Diff(want, m.read(rq.Status.Used)); d != "" {
		t.Fatalf("read (-want +got):\n%s", d)
	}
}

// Writing then reading a quota gives back the limits, for every unit kind.
func TestQuotaRoundTrip(t *testing.T) {
	m, err := buildQuotaMap(testComps)
	if err != nil {
		t.Fatal(err)
	}
	for _, limits := range []backends.Quantities{
		{"cpu": 4, "ram": 8, "storage": 100, "gpu": 2, "gpu_h100": 1},
		{"cpu": 0.5, "ram": 0.25, "storage": 1.5},
		{"cpu": 128, "ram": 2048, "gpu": 0},
	} {
		hard, err := m.hard(limits)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(limits, m.read(hard)); d != "" {
			t.Errorf("round trip of %v (-want +got):\n%s", limits, d)
		}
	}
	hard, err := m.hard(backends.Quantities{"cpu": 4, "pods": 10, "unknown": 3})
	if q := hard["limits.cpu"]; err != nil || len(hard) != 1 || q.String() != "4" {
		t.Fatalf("components without a quota key must be ignored: %v %v", hard, err)
	}
	if _, err := m.hard(backends.Quantities{"gpu_h100": 0.5}); err == nil {
		t.Fatal("half a GPU accepted")
	}
}

func TestMergeUsedAndSameHard(t *testing.T) {
	dst := corev1.ResourceList{"limits.cpu": resource.MustParse("2")}
	mergeUsed(dst, corev1.ResourceList{"limits.cpu": resource.MustParse("1500m"), "requests.nvidia.com/gpu": resource.MustParse("1")})
	mergeUsed(dst, corev1.ResourceList{"limits.cpu": resource.MustParse("3")})
	cpu, gpu := dst["limits.cpu"], dst["requests.nvidia.com/gpu"]
	if cpu.String() != "3" || gpu.String() != "1" {
		t.Fatalf("merged %v", dst)
	}
	a := corev1.ResourceList{"limits.memory": resource.MustParse("8Gi")}
	if !sameHard(a, corev1.ResourceList{"limits.memory": resource.MustParse("8192Mi")}) {
		t.Error("8Gi and 8192Mi differ")
	}
	if sameHard(a, corev1.ResourceList{"limits.memory": resource.MustParse("8Gi"), "limits.cpu": resource.MustParse("1")}) {
		t.Error("an extra key went unnoticed")
	}
}

func TestPodRequest(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Resources: req("500m")}, {Resources: req("250m")}},
		InitContainers: []corev1.Container{{Resources: req("2")}, {Resources: req("100m"), RestartPolicy: &always}},
		Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}}
	// max(0.5+0.25+0.1 sidecar, 2 init) + 0.05 overhead
	if got := podRequest(p, corev1.ResourceCPU); got.MilliValue() != 2050 {
		t.Fatalf("pod request = %s, want 2050m", got.String())
	}
	if got := podRequest(p, corev1.ResourceMemory); !got.IsZero() {
		t.Fatalf("no memory requested, got %s", got.String())
	}
}

// Limits a quantity cannot hold are refused with a reason naming the limit, never wrapped into
// a quota that means something else (RAM 17179869184 GB was a quota of 0, 9e9 GB a negative one,
// CPU 1e16 -9223372036854775808m).
func TestQuotaRefusesLimitsThatWrap(t *testing.T) {
	m, err := buildQuotaMap(testComps)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		limits backends.Quantities
		want   string
	}{
		"RAM 2^34 GB":   {backends.Quantities{"ram": 17179869184}, "limit ram=1.7179869184e+10 (GiB): is too large (at most 8589934591)"},
		"RAM 9e9 GB":    {backends.Quantities{"ram": 9e9}, "limit ram=9e+09 (GiB): is too large"},
		"storage 1e300": {backends.Quantities{"storage": 1e300}, "limit storage=1e+300 (GiB): is too large"},
		"CPU 1e16":      {backends.Quantities{"cpu": 1e16}, "limit cpu=1e+16 (cores): is too large"},
		"GPUs 1e19":     {backends.Quantities{"gpu": 1e19}, "limit gpu=1e+19 (count): is too large"},
		"negative CPU":  {backends.Quantities{"cpu": -1}, "must not be negative"},
	}
	for name, c := range cases {
		hard, err := m.hard(c.limits)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: hard = %v, %v; want an error saying %q", name, hard, err, c.want)
			continue
		}
		if msg, ok := failure.PublicMessage(err); !ok || msg == "" {
			t.Errorf("%s: %v is not a message for the customer", name, err)
		}
	}
	hard, err := m.hard(backends.Quantities{"ram": 8589934591, "cpu": 9e15})
	if q := hard["limits.memory"]; err != nil || q.Sign() <= 0 || q.Value() != 8589934591<<30 {
		t.Fatalf("the largest RAM that fits: %v, %v", hard, err)
	}
}
