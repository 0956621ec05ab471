package novainfra

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// Quota headroom for the largest order the offering allows (diagnostics).

// maxServers is the most servers a cluster may have (etcd: 1, 3 or 5).
const maxServers = 5

// need is what an order takes of each quota, by service and key (ram in MB, gigabytes in GB).
type need map[tenant.Service]tenant.Values

func (n need) add(svc tenant.Service, key string, v int) {
	if n[svc] == nil {
		n[svc] = tenant.Values{}
	}
	n[svc][key] += v
}

// largestOrder is the biggest cluster the offering allows: 5 servers of the server flavor,
// the load balancer, and (when the worker_nodes component has a limit) that many agents, at
// most max_worker_nodes, at their role's minimum; basis says what was counted.
func (in *Infra) largestOrder(ctx context.Context, cl *conn) (need, string, error) {
	s := in.settings
	n := need{}
	node := func(flavorName string, count, systemGB, dataGB int) error {
		f, err := cl.flavor(ctx, flavorName)
		if err != nil {
			return err
		}
		if systemGB == 0 {
			systemGB = max(f.Disk, s.SystemVolumeMinSizeGB)
		}
		in.addNodes(n, count, f.VCPUs, f.RAM, systemGB, dataGB)
		return nil
	}
	if err := node(s.ServerFlavorName, maxServers, s.ServerSystemVolumeGB, s.ServerDataVolumeGB); err != nil {
		return nil, "", err
	}
	basis := fmt.Sprintf("%d servers of %s", maxServers, s.ServerFlavorName)
	if s.LBFlavorName != "" {
		if err := node(s.LBFlavorName, 1, s.LBSystemVolumeGB, s.LBDataVolumeGB); err != nil {
			return nil, "", err
		}
		basis += ", the load balancer"
	}
	if agents := in.maxAgents(); agents > 0 {
		req := s.RoleRequirements[rke2.RoleAgent.String()]
		in.addNodes(n, agents, req.CPU, req.RAMMB, max(s.WorkerSystemVolumeGB, s.SystemVolumeMinSizeGB), 0)
		basis += fmt.Sprintf(", %d agents at %d vCPU / %d MB (%s limit)", agents, req.CPU, req.RAMMB, s.AgentNodesComponent)
	} else {
		basis += fmt.Sprintf(" (agents not counted: the %s component has no limit)", s.AgentNodesComponent)
	}
	return n, basis, nil
}

func (in *Infra) addNodes(n need, count, vcpus, ramMB, systemGB, dataGB int) {
	n.add(tenant.Nova, "cores", count*vcpus)
	n.add(tenant.Nova, "ram", count*ramMB)
	n.add(tenant.Nova, "instances", count)
	n.add(tenant.Cinder, "gigabytes", count*(systemGB+dataGB))
	n.add(tenant.Cinder, "volumes", count*(1+min(dataGB, 1)))
	n.add(tenant.Neutron, "port", count)
	if in.settings.AllocateFloatingIPToAllNodes {
		n.add(tenant.Neutron, "floatingip", count)
	}
}

// maxAgents is the worker_nodes component's limit (0: none).
func (in *Infra) maxAgents() int {
	c, ok := in.components.Get(in.settings.AgentNodesComponent)
	if !ok || c.Limit == nil || *c.Limit <= 0 {
		return 0
	}
	return int(min(*c.Limit, float64(in.settings.MaxWorkerNodes))) // no order gets more
}

// capped: no cluster exceeds the tenant maxima (the evaluator refuses it).
func (in *Infra) capped(n need) need {
	s := in.settings
	limit := func(svc tenant.Service, key string, maxV int) {
		if maxV > 0 && n[svc][key] > maxV {
			n[svc][key] = maxV
		}
	}
	limit(tenant.Nova, "cores", s.TenantMaxCPU)
	limit(tenant.Nova, "ram", s.TenantMaxRAMGB*1024)
	limit(tenant.Cinder, "gigabytes", s.TenantMaxDiskGB)
	return n
}

// headroom is the diagnostics line: the shared project's free quota (limit − usage) against
// the largest order, or (per_cluster) the quotas the agent sets from the tenant maxima against it.
func (in *Infra) headroom(ctx context.Context, cl *conn) backends.Check {
	ch := backends.Check{Name: "openstack quota headroom"}
	if in.settings.ServerFlavorName == "" {
		ch.OK, ch.Detail = true, "self-managed: no fixed flavors, the largest order is not known; not checked"
		return ch
	}
	want, basis, err := in.largestOrder(ctx, cl)
	if err != nil {
		ch.Detail = err.Error()
		return ch
	}
	var short []string
	if in.settings.OpenStack.PerCluster() {
		for svc, vals := range in.quotas() {
			for key, limit := range vals {
				if w := want[svc][key]; w > limit {
					short = append(short, fmt.Sprintf("%s %s: needs %d, the cluster's project gets %d (short by %d)", svc, key, w, limit, w-limit))
				}
			}
		}
		sort.Strings(short)
		ch.OK = len(short) == 0
		if ch.OK {
			ch.Detail = fmt.Sprintf("per_cluster: the largest order (%s) fits the quotas each cluster's project gets from the tenant maxima %s; "+
				"its other quotas are raised to the order's needs where OpenStack's defaults are less", basis, in.describeQuotas())
		} else {
			ch.Detail = fmt.Sprintf("per_cluster: the largest order (%s) does not fit the quotas each cluster's project gets: %s", basis, strings.Join(short, "; "))
		}
		return ch
	}
	want = in.capped(want)
	svcs := tenant.ServicesOf(cl.Clients)
	var have []string
	for _, svc := range []tenant.Service{tenant.Nova, tenant.Cinder, tenant.Neutron} {
		limits, used, err := tenant.GetUsage(ctx, svcs, svc, cl.ProjectID)
		if err != nil {
			ch.Detail = err.Error()
			return ch
		}
		keys := make([]string, 0, len(want[svc]))
		for k := range want[svc] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			w, limit := want[svc][key], limits[key]
			if limit < 0 {
				have = append(have, fmt.Sprintf("%s %s %d of unlimited", svc, key, w))
				continue
			}
			free := limit - used[key]
			have = append(have, fmt.Sprintf("%s %s %d of %d free", svc, key, w, free))
			if w > free {
				short = append(short, fmt.Sprintf("%s %s: needs %d, %d free (quota %d, %d used), short by %d", svc, key, w, free, limit, used[key], w-free))
			}
		}
	}
	ch.OK = len(short) == 0
	if ch.OK {
		ch.Detail = fmt.Sprintf("project %s has room for the largest order (%s): %s", in.settings.OpenStack.ProjectName, basis, strings.Join(have, ", "))
	} else {
		ch.Detail = fmt.Sprintf("project %s lacks room for the largest order (%s): %s", in.settings.OpenStack.ProjectName, basis, strings.Join(short, "; "))
	}
	return ch
}

func (in *Infra) describeQuotas() string {
	q := in.quotas()
	if len(q) == 0 {
		return "(none set: OpenStack's default quotas apply)"
	}
	var parts []string
	for _, svc := range []tenant.Service{tenant.Nova, tenant.Cinder} {
		keys := make([]string, 0, len(q[svc]))
		for k := range q[svc] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %s %d", svc, k, q[svc][k]))
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
