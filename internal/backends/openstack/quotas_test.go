package openstack

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

func comp(name string, settings map[string]any) backends.Component {
	return backends.Component{Name: name, UnitFactor: 1, Settings: settings}
}

func TestComponentsMapToQuotas(t *testing.T) {
	m, err := mapComponents(backends.Components{
		comp("vcpu", nil), comp("ram", nil), comp("storage", nil), comp("floating_ip_count", nil),
		comp("nets", map[string]any{"quota": "network"}), comp("security_group_rule_count", nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for c, q := range m.byComponent {
		got[c] = q.Service.String() + "." + q.Name
	}
	want := map[string]string{"vcpu": "nova.cores", "ram": "nova.ram", "storage": "cinder.gigabytes",
		"floating_ip_count": "neutron.floatingip", "nets": "neutron.network", "security_group_rule_count": "neutron.security_group_rule"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mapping (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]service{nova, cinder, neutron}, m.services()); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
}

func TestComponentMappingErrors(t *testing.T) {
	cases := []struct {
		name  string
		comps backends.Components
		want  string
	}{
		{"unknown name", backends.Components{comp("gpu", nil)}, "backend_components.gpu: no OpenStack quota is named \"gpu\""},
		{"unknown quota", backends.Components{comp("x", map[string]any{"quota": "flavors"})}, "backend_components.x.quota: unknown OpenStack quota"},
		{"quota not a string", backends.Components{comp("x", map[string]any{"quota": 3})}, "backend_components.x.quota"},
		{"two on one quota", backends.Components{comp("cores", nil), comp("vcpu", nil)}, "quota \"cores\" is already mapped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mapComponents(tc.comps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestQuotaConversionBothWays(t *testing.T) {
	m, err := mapComponents(backends.Components{comp("cores", nil), comp("ram", nil), comp("storage", nil), comp("network", nil)})
	if err != nil {
		t.Fatal(err)
	}
	// Backend units arrive already multiplied by unit_factor: ram 4 GB × 1024, storage 1500 MB × 1/1024.
	limits := backends.Quantities{"cores": 4, "ram": 4096.0000001, "storage": 1500.0 / 1024, "network": 10, "unmapped": 9}
	q, err := m.toQuotas(limits)
	want := map[service]quotaValues{nova: {"cores": 4, "ram": 4096}, cinder: {"gigabytes": 2}, neutron: {"network": 10}}
	if diff := cmp.Diff(want, q); err != nil || diff != "" {
		t.Errorf("to quotas (-want +got):\n%s%v", diff, err)
	}
	q[neutron]["network"] = -1 // what OpenStack holds may be unlimited (an administrator lifted it)
	back := m.fromQuotas(q)
	if diff := cmp.Diff(backends.Quantities{"cores": 4, "ram": 4096, "storage": 2, "network": -1}, back); diff != "" {
		t.Errorf("from quotas (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[service]quotaValues{nova: {"cores": 2, "ram": 2048}, cinder: {"gigabytes": 1}, neutron: {"network": -1}},
		scaled(q, 0.5)); diff != "" {
		t.Errorf("downscaled (-want +got):\n%s", diff)
	}
	below := m.belowUsage(q, map[service]usageOf{nova: {"cores": 5, "ram": 100}, neutron: {"network": 50}})
	if diff := cmp.Diff([]string{"cores (nova quota cores) 4 < 5 in use"}, below); diff != "" {
		t.Errorf("below usage (-want +got):\n%s", diff)
	}
	if got := clampToUsage(quotaValues{"gigabytes": 0, "volumes": -1}, usageOf{"gigabytes": 7, "volumes": 3}); !cmp.Equal(got, quotaValues{"gigabytes": 7, "volumes": -1}) {
		t.Errorf("clamp = %v", got)
	}
}

func TestQuotaInt(t *testing.T) {
	cases := map[float64]int{0: 0, 1: 1, 1.0000000001: 1, 1.2: 2, 2147483647: 2147483647}
	for in, want := range cases {
		if got, err := quotaInt(in); err != nil || got != want {
			t.Errorf("quotaInt(%v) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// A limit no OpenStack quota can hold is refused with a reason naming the limit, never written
// as another amount: a negative limit used to become -1 (unlimited), 1e12 the int32 maximum.
func TestQuotaRefusesLimitsThatDoNotFit(t *testing.T) {
	m, err := mapComponents(backends.Components{comp("cores", nil), comp("ram", nil), comp("storage", nil)})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		limits backends.Quantities
		want   string
	}{
		"negative":      {backends.Quantities{"cores": 4, "storage": -1}, "limit storage=-1 (cinder quota gigabytes): must not be negative"},
		"half negative": {backends.Quantities{"cores": -0.5}, "limit cores=-0.5 (nova quota cores): must not be negative"},
		"beyond int32":  {backends.Quantities{"ram": 1e12}, "limit ram=1e+12 (nova quota ram): is too large (at most 2147483647)"},
		"not a number":  {backends.Quantities{"ram": math.Inf(1)}, "is not a number"},
	}
	for name, c := range cases {
		q, err := m.toQuotas(c.limits)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: toQuotas = %v, %v; want an error saying %q", name, q, err, c.want)
			continue
		}
		if _, ok := failure.PublicMessage(err); !ok {
			t.Errorf("%s: %v is not a message for the customer", name, err)
		}
	}
}
