package rke2

import (
	"context"
	"errors"
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Flavor is a Nova flavor's size.
type Flavor struct {
	Name  string
	VCPUs int
	RAMMB int
}

// FlavorSource resolves flavor names (or ids) to sizes. The backend's implementation reads Nova;
// a missing flavor is an error wrapping failure.ErrNotFound, an unreachable Nova a transient one.
type FlavorSource interface {
	Flavor(ctx context.Context, nameOrID string) (Flavor, error)
}

var _ backends.OrderEvaluator = (*Evaluator)(nil)

// ClusterNames tells who owns a cluster name in Rancher: the Waldur resource UUID its
// provisioning cluster is labelled with ("" for a cluster site-agent did not make), or an
// error wrapping failure.ErrNotFound when the name is free.
type ClusterNames interface {
	ClusterOwner(ctx context.Context, name string) (string, error)
}

// Evaluator implements backends.OrderEvaluator for rke2 offerings: an order that could not be
// carried out is rejected before approval, with a reason the customer can act on.
type Evaluator struct {
	Settings *Settings
	Flavors  FlavorSource
	// Names, when set, makes a Create order whose cluster name is taken in Rancher a rejection.
	Names ClusterNames
	// Versions, when set, is where an Update order's Kubernetes version is judged against the
	// version the cluster runs (else against the k8s_version setting).
	Versions ClusterVersions
}

// Evaluate implements backends.OrderEvaluator. Create and Update orders are parsed and checked;
// a Nova failure leaves the order pending (the error is returned), never rejected.
func (e *Evaluator) Evaluate(ctx context.Context, review backends.OrderReview) (backends.Decision, string, error) {
	switch review.Type {
	case "Create":
	case "Update":
		// An Update order carries the new limits, not the creation attributes: judge the counts,
		// and the Kubernetes version it asks for (new_options.k8s_version) against the cluster's.
		if err := checkLimitCounts(e.Settings, review.Resource.Limits); err != nil {
			msg, _ := failure.PublicMessage(err)
			return backends.Reject, msg, nil
		}
		why, err := e.versionChange(ctx, review.Resource.UUID, review.Resource.Attributes)
		switch {
		case err != nil:
			return backends.Defer, "", err
		case why != "":
			return backends.Reject, why, nil
		}
		return backends.Accept, "", nil
	default:
		return backends.Accept, "", nil
	}
	spec, err := ParseSpec(e.Settings, review.Resource)
	if err != nil {
		return backends.Reject, err.Error(), nil
	}
	if err := ctx.Err(); err != nil {
		return backends.Defer, "", err
	}
	flavors, err := e.resolve(ctx, &spec)
	if err != nil {
		if msg, ok := failure.PublicMessage(err); ok {
			return backends.Reject, msg, nil
		}
		return backends.Defer, "", err
	}
	if err := Check(e.Settings, &spec, flavors); err != nil {
		msg, _ := failure.PublicMessage(err)
		return backends.Reject, msg, nil
	}
	if err := e.nameFree(ctx, spec.Name, review.Resource.UUID); err != nil {
		if msg, ok := failure.PublicMessage(err); ok {
			return backends.Reject, msg, nil
		}
		return backends.Defer, "", err
	}
	return backends.Accept, "", nil
}

// nameFree: the cluster name is unused in Rancher, or used by this very resource (an order
// evaluated again after a restart).
func (e *Evaluator) nameFree(ctx context.Context, name, resource string) error {
	if e.Names == nil {
		return nil
	}
	owner, err := e.Names.ClusterOwner(ctx, name)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("look up cluster name %q: %w", name, err)
	case owner != "" && owner == resource:
		return nil
	}
	return failure.Errorf("a cluster named %q already exists; choose another name", name)
}

// checkLimitCounts judges the node counts an Update order asks for. Flavor sizes and tenant
// totals of a scaled cluster are checked by the backend against the cluster it finds.
func checkLimitCounts(s *Settings, limits backends.Quantities) error {
	if v, ok := limits[s.ServerNodesComponent]; ok {
		if n, ok := toInt(v); !ok || !validServerCount(n) {
			return failure.Errorf("a cluster needs 1, 3 or 5 server nodes (etcd keeps quorum only with an odd count), not %v", v)
		}
	}
	if v, ok := limits[s.AgentNodesComponent]; ok {
		if n, ok := toInt(v); !ok || n < 1 {
			return failure.Errorf("a cluster needs at least one agent (worker) node, not %v", v)
		} else if n > s.MaxWorkerNodes {
			return failure.Errorf("a cluster here has at most %d worker nodes, not %d", s.MaxWorkerNodes, n)
		}
	}
	return nil
}

// resolve looks up every flavor the spec names. Unknown flavors become public errors.
func (e *Evaluator) resolve(ctx context.Context, spec *ClusterSpec) (map[string]Flavor, error) {
	out := map[string]Flavor{}
	names := []string{}
	for _, r := range []Role{RoleServer, RoleAgent} {
		for _, sh := range spec.shapes(r) {
			names = append(names, sh.node.Flavor)
		}
	}
	if spec.Mode == ModeManaged && e.Settings.LBFlavorName != "" {
		names = append(names, e.Settings.LBFlavorName)
	}
	for _, n := range names {
		if _, done := out[n]; done {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := e.Flavors.Flavor(ctx, n)
		switch {
		case errors.Is(err, failure.ErrNotFound):
			return nil, failure.Errorf("flavor %q does not exist in this cloud", n)
		case err != nil:
			return nil, fmt.Errorf("look up flavor %q: %w", n, err)
		}
		out[n] = f
	}
	return out, nil
}

// maxClusterName leaves room in a 63-character DNS label for "-server-NNN".
const maxClusterName = 50

// Totals are what a cluster asks of its tenant.
type Totals struct {
	VCPUs  int
	RAMMB  int
	DiskGB int
}

// Check judges a parsed spec against the settings and the resolved flavors; every failure is
// a failure.Errorf whose message is fit for the customer.
func Check(s *Settings, spec *ClusterSpec, flavors map[string]Flavor) error {
	if !dnsLabelRe.get().MatchString(spec.Name) || len(spec.Name) > maxClusterName {
		return failure.Errorf("cluster name %q must be a DNS label of at most %d characters (node names add -server-N): lower-case letters, digits and '-', starting and ending with a letter or digit", spec.Name, maxClusterName)
	}
	if !validServerCount(spec.Servers) {
		return failure.Errorf("a cluster needs 1, 3 or 5 server nodes (etcd keeps quorum only with an odd count), not %d", spec.Servers)
	}
	if spec.Agents < 1 {
		return failure.Errorf("a cluster needs at least one agent (worker) node")
	}
	for _, role := range []Role{RoleServer, RoleAgent} {
		if err := checkRole(s, spec, role, flavors); err != nil {
			return err
		}
	}
	if spec.Mode == ModeManaged {
		t := ClusterTotals(s, spec, flavors)
		return checkTotals(s, t)
	}
	return nil
}

func checkRole(s *Settings, spec *ClusterSpec, role Role, flavors map[string]Flavor) error {
	req := s.RoleRequirements[role.String()]
	for _, sh := range spec.shapes(role) { // per shape, not per node: counts may be large
		n := sh.node
		f, ok := flavors[n.Flavor]
		if !ok {
			return failure.Errorf("flavor %q does not exist in this cloud", n.Flavor)
		}
		if !s.FlavorAllowed(f.Name) {
			return failure.Errorf("flavor %q is not offered here (allowed: %s)", f.Name, s.FlavorsRegex)
		}
		if f.VCPUs < req.CPU || f.RAMMB < req.RAMMB {
			return failure.Errorf("flavor %q (%d vCPU, %d MB RAM) is too small for %s node, which needs at least %d vCPU and %d MB RAM",
				f.Name, f.VCPUs, f.RAMMB, map[Role]string{RoleServer: "a server", RoleAgent: "an agent"}[role], req.CPU, req.RAMMB)
		}
		if sv := n.SystemVolume.SizeGB; sv != 0 && sv < s.SystemVolumeMinSizeGB {
			return failure.Errorf("the system volume of a %s node needs at least %d GB, not %d", role, s.SystemVolumeMinSizeGB, sv)
		}
	}
	return nil
}

// ClusterTotals adds up vCPU, RAM and disk of every node (and the managed load balancer): per
// node shape, its size times how many nodes have it.
func ClusterTotals(s *Settings, spec *ClusterSpec, flavors map[string]Flavor) Totals {
	var t Totals
	add := func(n NodeSpec, count int) {
		f := flavors[n.Flavor]
		disk := n.SystemVolume.SizeGB
		for _, d := range n.DataVolumes {
			disk += d.SizeGB
		}
		t.VCPUs += count * f.VCPUs
		t.RAMMB += count * f.RAMMB
		t.DiskGB += count * disk
	}
	for _, r := range []Role{RoleServer, RoleAgent} {
		for _, sh := range spec.shapes(r) {
			add(sh.node, sh.count)
		}
	}
	if spec.Mode == ModeManaged && s.LBFlavorName != "" {
		lb := NodeSpec{Flavor: s.LBFlavorName, SystemVolume: Volume{SizeGB: s.LBSystemVolumeGB}}
		if s.LBDataVolumeGB > 0 {
			lb.DataVolumes = []DataVolume{{Volume: Volume{SizeGB: s.LBDataVolumeGB}}}
		}
		add(lb, 1)
	}
	return t
}

func checkTotals(s *Settings, t Totals) error {
	if s.TenantMaxCPU > 0 && t.VCPUs > s.TenantMaxCPU {
		return failure.Errorf("the cluster needs %d vCPU in total, more than the %d a cluster may have", t.VCPUs, s.TenantMaxCPU)
	}
	if s.TenantMaxRAMGB > 0 && t.RAMMB > s.TenantMaxRAMGB*1024 {
		return failure.Errorf("the cluster needs %d GB RAM in total, more than the %d GB a cluster may have", (t.RAMMB+1023)/1024, s.TenantMaxRAMGB)
	}
	if s.TenantMaxDiskGB > 0 && t.DiskGB > s.TenantMaxDiskGB {
		return failure.Errorf("the cluster needs %d GB of volumes in total, more than the %d GB a cluster may have", t.DiskGB, s.TenantMaxDiskGB)
	}
	return nil
}
