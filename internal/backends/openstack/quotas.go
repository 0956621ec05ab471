package openstack

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/usage"
)

// service is one OpenStack API holding quotas (the quota API is shared: tenant.GetQuotas …).
type service = tenant.Service

const (
	nova    = tenant.Nova
	cinder  = tenant.Cinder
	neutron = tenant.Neutron
)

// quota is one OpenStack quota the backend can manage. Units are OpenStack's own: ram in MB,
// gigabytes in GB, everything else a count.
type quota struct {
	Name    string // the key in the service's quota API
	Service service
}

// quotaTable lists the quotas by canonical name (Waldur's OpenStack plugin maps the same set);
// quotaAliases maps other accepted names (component names of Waldur's OpenStack plugin and
// plural forms) to canonical quota names. Both are built on first use, not at start-up: most
// agents have no OpenStack offering (issue 20 item 7).
var (
	quotaOnce    sync.Once
	quotaTable   map[string]quota
	quotaAliases map[string]string
)

func buildQuotaTables() {
	quotaTable = map[string]quota{
		"cores":               {"cores", nova},
		"ram":                 {"ram", nova},
		"instances":           {"instances", nova},
		"volumes":             {"volumes", cinder},
		"gigabytes":           {"gigabytes", cinder},
		"snapshots":           {"snapshots", cinder},
		"backups":             {"backups", cinder},
		"backup_gigabytes":    {"backup_gigabytes", cinder},
		"network":             {"network", neutron},
		"subnet":              {"subnet", neutron},
		"port":                {"port", neutron},
		"router":              {"router", neutron},
		"floatingip":          {"floatingip", neutron},
		"security_group":      {"security_group", neutron},
		"security_group_rule": {"security_group_rule", neutron},
	}
	quotaAliases = map[string]string{
		"vcpu": "cores", "cpu": "cores", "memory": "ram", "storage": "gigabytes", "disk": "gigabytes",
		"floating_ip": "floatingip", "floating_ips": "floatingip", "floating_ip_count": "floatingip",
		"networks": "network", "network_count": "network", "subnets": "subnet", "subnet_count": "subnet",
		"ports": "port", "port_count": "port", "routers": "router", "router_count": "router",
		"security_groups": "security_group", "security_group_count": "security_group",
		"security_group_rules": "security_group_rule", "security_group_rule_count": "security_group_rule",
	}
}

func lookupQuota(name string) (quota, bool) {
	quotaOnce.Do(buildQuotaTables)
	n := strings.ToLower(strings.TrimSpace(name))
	if canon, ok := quotaAliases[n]; ok {
		n = canon
	}
	q, ok := quotaTable[n]
	return q, ok
}

func quotaNames() string {
	quotaOnce.Do(buildQuotaTables)
	names := make([]string, 0, len(quotaTable))
	for n := range quotaTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// quotaMap maps the offering's components to quotas.
type quotaMap struct {
	byComponent map[string]quota
	components  []string // sorted
}

// mapComponents maps each component to a quota: the component's `quota` setting when present,
// else its name. A component no quota matches, or two components on one quota, is an error.
func mapComponents(comps backends.Components) (quotaMap, error) {
	m := quotaMap{byComponent: map[string]quota{}}
	owner := map[string]string{}
	for _, c := range comps.Sorted() {
		key := "backend_components." + c.Name
		name, explicit := c.Name, false
		if v, ok := c.Settings["quota"]; ok {
			s, isString := v.(string)
			if !isString || s == "" {
				return m, fmt.Errorf("%s.quota: want a quota name (one of %s), got %v", key, quotaNames(), v)
			}
			name, explicit = s, true
		}
		q, ok := lookupQuota(name)
		if !ok {
			if explicit {
				return m, fmt.Errorf("%s.quota: unknown OpenStack quota %q (known: %s)", key, name, quotaNames())
			}
			return m, fmt.Errorf("%s: no OpenStack quota is named %q; add `quota: <name>` to the component (known: %s)", key, name, quotaNames())
		}
		if other, dup := owner[q.Name]; dup {
			return m, fmt.Errorf("%s: quota %q is already mapped from component %q", key, q.Name, other)
		}
		owner[q.Name] = c.Name
		m.byComponent[c.Name] = q
		m.components = append(m.components, c.Name)
	}
	return m, nil
}

// services lists the services with at least one mapped quota, in a fixed order.
func (m quotaMap) services() []service {
	var out []service
	for _, s := range []service{nova, cinder, neutron} {
		for _, q := range m.byComponent {
			if q.Service == s {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// quotaValues is one service's quota values by API key.
type quotaValues = tenant.Values

// toQuotas converts limits (backend units, by component) to integer quota values per service.
// Components without a quota mapping are ignored; so are limits the resource does not have. A
// limit no quota can hold (negative, not a number, beyond OpenStack's 32-bit quotas) is refused
// with a message for the customer, before anything is written: a negative limit used to become
// -1, which OpenStack reads as unlimited.
func (m quotaMap) toQuotas(limits backends.Quantities) (map[service]quotaValues, error) {
	out := map[service]quotaValues{}
	for _, comp := range m.components {
		v, ok := limits[comp]
		if !ok {
			continue
		}
		q := m.byComponent[comp]
		n, err := quotaInt(v)
		if err != nil {
			return nil, failure.Errorf("limit %s=%v (%s quota %s): %v", comp, v, q.Service, q.Name, err)
		}
		if out[q.Service] == nil {
			out[q.Service] = quotaValues{}
		}
		out[q.Service][q.Name] = n
	}
	return out, nil
}

// fromQuotas converts per-service quota values back to component quantities.
func (m quotaMap) fromQuotas(values map[service]quotaValues) backends.Quantities {
	out := backends.Quantities{}
	for _, comp := range m.components {
		q := m.byComponent[comp]
		if v, ok := values[q.Service][q.Name]; ok {
			out[comp] = float64(v)
		}
	}
	return out
}

// describe lists the mapped quotas by OpenStack quota name, in OpenStack units, for backend
// metadata: a number, or "unlimited" for OpenStack's -1 (never a negative amount).
func (m quotaMap) describe(values map[service]quotaValues) map[string]any {
	out := map[string]any{}
	for _, comp := range m.components {
		q := m.byComponent[comp]
		v, ok := values[q.Service][q.Name]
		switch {
		case !ok:
		case v < 0:
			out[q.Name] = "unlimited"
		default:
			out[q.Name] = v
		}
	}
	return out
}

// quotaInt turns a backend-unit amount into an OpenStack quota. Fractions round up, so a
// unit_factor such as 1/1024 (Waldur MB → GB) never grants less than was ordered; a tolerance of
// 1e-6 absorbs float noise (4.0000001 → 4). Nova, Cinder and Neutron keep quotas as 32-bit
// integers; a negative amount is refused (OpenStack reads -1 as unlimited).
func quotaInt(v float64) (int, error) {
	n, err := usage.WholeUp(v, 1, math.MaxInt32)
	return int(n), err
}

// scaled returns the downscaled quotas: each finite value × factor, rounded down; unlimited
// stays unlimited.
func scaled(values map[service]quotaValues, factor float64) map[service]quotaValues {
	out := map[service]quotaValues{}
	for svc, vals := range values {
		out[svc] = quotaValues{}
		for k, v := range vals {
			if v < 0 {
				out[svc][k] = v
				continue
			}
			out[svc][k] = int(math.Floor(float64(v)*factor + 1e-9))
		}
	}
	return out
}

// zeroQuotas returns every mapped quota set to zero.
func (m quotaMap) zeroQuotas() map[service]quotaValues {
	out := map[service]quotaValues{}
	for _, q := range m.byComponent {
		if out[q.Service] == nil {
			out[q.Service] = quotaValues{}
		}
		out[q.Service][q.Name] = 0
	}
	return out
}

// usageOf is what a service reports as used for one quota (in_use + reserved).
type usageOf = tenant.Usage

// belowUsage lists, for the user, every new limit lower than what the tenant already uses.
func (m quotaMap) belowUsage(want map[service]quotaValues, used map[service]usageOf) []string {
	var out []string
	for _, comp := range m.components {
		q := m.byComponent[comp]
		limit, ok := want[q.Service][q.Name]
		if !ok || limit < 0 {
			continue
		}
		if u := used[q.Service][q.Name]; limit < u {
			out = append(out, fmt.Sprintf("%s (%s quota %s) %d < %d in use", comp, q.Service, q.Name, limit, u))
		}
	}
	return out
}
