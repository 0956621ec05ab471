package rke2

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// passesPerCall bounds the planning passes of one call: a pass whose actions finish at once
// (a deletion, a forgotten node) is followed by another; anything that takes time (a VM
// booting, a node registering or draining) is left for the next call.
const passesPerCall = 3

// cluster is one reconciliation's view of a cluster.
type cluster struct {
	ref     ClusterRef
	spec    *ClusterSpec
	rc      RancherCluster
	rcFresh bool // rc read during this call, not remembered from an earlier one (clustermemo.go)
	net     NetworkInfo
	netOK   bool            // net ensured during this call (network)
	vaultOK bool            // Vault objects ensured during this call
	whole   map[string]bool // nodes found whole during this call (shape.go)
	// readOnly: a health pass of a paused cluster (AnnotationReconcile): nothing is mended,
	// not even a missing floating IP.
	readOnly bool
	log      *zap.Logger
}

// reconcile brings the cluster towards spec: Rancher cluster, network, then planning passes;
// once every node is ready, the Kubernetes upgrade to target ("" none) is asked for and
// followed (upgrade.go).
func (b *Backend) reconcile(ctx context.Context, uuid string, spec *ClusterSpec, target string) (backends.Info, error) {
	c := &cluster{ref: ClusterRef{UUID: uuid, Name: spec.Name}, spec: spec, whole: map[string]bool{},
		log: backends.Log(backends.ForResource(ctx, uuid), b.d.Log).With(zap.String("cluster", spec.Name), zap.String("resource", uuid))}
	info := backends.Info{BackendID: spec.Name}
	if err := b.rancherCluster(ctx, c); err != nil {
		return backends.Info{}, err
	}
	if _, err := b.network(ctx, c); err != nil {
		return info, err
	}
	if c.rc.ManagementID == "" {
		return info, notReady(c.ref, "waiting for Rancher to assign the cluster's id")
	}
	d := Desired{Cluster: uuid, Name: spec.Name, Servers: spec.Servers, Agents: spec.Agents, ViaRancher: b.s.Bootstrap == BootstrapRancher}
	for pass := 0; pass < passesPerCall; pass++ {
		obs, servers, rnodes, err := b.observe(ctx, c)
		if err != nil {
			return info, err
		}
		plan := PlanPass(d, obs.Nodes)
		if again, err := b.freshen(ctx, c, obs, plan); err != nil {
			return info, err
		} else if again {
			continue
		}
		if len(obs.Strays) > 0 {
			if err := b.deleteStrays(ctx, c, obs.Strays, servers, rnodes); err != nil {
				return info, err
			}
			continue // observe again
		}
		if plan.Done {
			if err := b.upgrade(ctx, c, target, obs.Nodes); err != nil {
				return info, err
			}
			return b.finish(ctx, c, info, obs.Nodes)
		}
		if len(plan.Actions) == 0 {
			if len(plan.Refusals) > 0 {
				return info, failure.Errorf("cluster %s: %s", spec.Name, strings.Join(plan.Refusals, "; "))
			}
			return info, notReady(c.ref, "%s: %s", plan.ClusterStage, strings.Join(plan.Waits, "; "))
		}
		if err := b.apply(ctx, c, plan.Actions, byName(servers), byRancherName(rnodes)); err != nil {
			return info, err
		}
		if !quick(plan.Actions) {
			return info, notReady(c.ref, "%s: %s", plan.ClusterStage, describeActions(plan.Actions))
		}
	}
	return info, notReady(c.ref, "still converging")
}

// network makes sure of the cluster's network chain once per call and returns it (an order's
// call always does, first; a health pass only when it mends or makes a node).
func (b *Backend) network(ctx context.Context, c *cluster) (NetworkInfo, error) {
	if c.netOK {
		return c.net, nil
	}
	net, err := b.d.Infra.EnsureNetwork(ctx, c.ref)
	if err != nil {
		return NetworkInfo{}, fmt.Errorf("network: %w", err)
	}
	c.net, c.netOK = net, true
	return net, nil
}

// deleteStrays deletes duplicate VMs of one node (a create sent twice after a lost answer). The
// twins carry the same single-use secret id, so only one of them can register; which one is
// unknown until Rancher lists the node. So while the node has not registered, every VM of that
// name goes and the planner creates it again with fresh credentials; once registered, the VM
// Observe keeps stays.
func (b *Backend) deleteStrays(ctx context.Context, c *cluster, strays, servers []ServerView, rnodes []RancherNodeView) error {
	doomed := append([]ServerView(nil), strays...)
	registered := byRancherName(rnodes)
	seen := map[string]bool{}
	for _, s := range strays {
		if _, ok := registered[s.Name]; ok || seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		for _, v := range servers {
			if v.Name == s.Name && !containsID(strays, v.ID) {
				doomed = append(doomed, v)
			}
		}
	}
	for _, s := range doomed {
		c.log.Info("deleting a duplicate server", zap.String("server", s.Name), zap.String("id", s.ID))
		if err := b.d.Infra.DeleteServer(ctx, c.ref, s); err != nil {
			return fmt.Errorf("delete duplicate server %s: %w", s.Name, err)
		}
	}
	return nil
}

func containsID(l []ServerView, id string) bool {
	for _, v := range l {
		if v.ID == id {
			return true
		}
	}
	return false
}

// observe lists the cluster's servers and Rancher nodes and joins them.
func (b *Backend) observe(ctx context.Context, c *cluster) (Observed, []ServerView, []RancherNodeView, error) {
	servers, err := b.d.Infra.Servers(ctx, c.ref)
	if err != nil {
		return Observed{}, nil, nil, fmt.Errorf("list servers: %w", err)
	}
	rnodes, err := b.d.Rancher.Nodes(ctx, c.rc)
	if err != nil {
		return Observed{}, nil, nil, fmt.Errorf("list rancher nodes: %w", err)
	}
	obs, err := Observe(c.ref.UUID, servers, rnodes)
	if err != nil {
		return Observed{}, nil, nil, failure.Errorf("cluster %s: inventory on its servers is broken, planning stopped: %v", c.ref.Name, err)
	}
	b.markUnregistered(c, obs.Nodes, servers)
	markUnresponsive(obs.Nodes, b.d.Now(), b.s.NodeRepairAfter)
	if c.readOnly {
		return obs, servers, rnodes, nil
	}
	if err := b.checkShapes(ctx, c, obs.Nodes, servers); err != nil {
		return Observed{}, nil, nil, err
	}
	return obs, servers, rnodes, nil
}

// markUnregistered flags nodes whose VM has been up past the registration timeout without
// Rancher listing them: their bootstrap failed and waiting longer will not help. It trusts an
// absence only while the cluster is still coming up or Rancher lists some of its nodes, so an
// empty answer about an active cluster never gets its nodes replaced.
func (b *Backend) markUnregistered(c *cluster, nodes []Node, servers []ServerView) {
	listed := false
	for _, n := range nodes {
		listed = listed || n.Rancher != ""
	}
	if c.rc.State == "active" && !listed {
		return
	}
	now, vms := b.d.Now(), byName(servers)
	for i := range nodes {
		n := &nodes[i]
		vm, ok := vms[n.Name]
		if ok && n.VM == "ACTIVE" && n.Rancher == "" && !vm.Created.IsZero() && now.Sub(vm.Created) > b.s.RegistrationTimeout {
			n.Unregistered = true
		}
	}
}

// finish: every node is ready. The Vault objects served the nodes' bootstrap and go now (a
// later scale-up writes them again) — with bootstrap rke2 all but the secret, which keeps the
// cluster's join token; the resource learns the counts and the nodes (the same metadata a
// health pass reports for a cluster that is well: health_pass.go).
func (b *Backend) finish(ctx context.Context, c *cluster, info backends.Info, nodes []Node) (backends.Info, error) {
	remove := b.d.Vault.Remove
	if b.s.Bootstrap == BootstrapRKE2 {
		remove = b.d.Vault.RemoveAccess
	}
	if err := remove(ctx, c.ref.UUID); err != nil {
		return info, fmt.Errorf("remove the bootstrap vault objects: %w", err)
	}
	b.day2.setVault(c.ref.UUID, false)
	if err := b.registerArgo(ctx, c); err != nil {
		return info, err
	}
	info.Limits = backends.Quantities{b.s.ServerNodesComponent: float64(c.spec.Servers), b.s.AgentNodesComponent: float64(c.spec.Agents)}
	info.Metadata = b.metadata(c, Assess(nodes), nodes)
	c.log.Info("cluster ready", zap.Int("servers", c.spec.Servers), zap.Int("agents", c.spec.Agents))
	return info, nil
}

// provisionSpec is what Rancher is asked to create.
func (b *Backend) provisionSpec() ProvisionSpec {
	return ProvisionSpec{K8sVersion: b.s.K8sVersion, CNI: "cilium", DataDir: StorageMountPoint,
		ClusterCIDR: b.s.ClusterCIDR, ServiceCIDR: b.s.ServiceCIDR,
		RegistryURL: b.s.PrivateRegistryURL, RegistryUser: b.s.PrivateRegistryUser, RegistryPassword: b.s.PrivateRegistryPassword,
		Imported: b.s.Bootstrap == BootstrapRKE2,
		Etcd:     EtcdSnapshots{ScheduleCron: b.s.EtcdSnapshotScheduleCron, Retention: b.s.EtcdSnapshotRetention, S3: b.s.EtcdS3},
		Upgrade:  UpgradeStrategy{AgentBatch: b.s.UpgradeAgentBatch, DrainTimeout: b.s.DrainTimeout}}
}

// quick: the actions finished when they returned (deletions), so planning again now is useful.
func quick(actions []Action) bool {
	for _, a := range actions {
		if a.Kind == Create || a.Kind == Remove {
			return false
		}
	}
	return true
}

func describeActions(actions []Action) string {
	parts := make([]string, 0, len(actions))
	for _, a := range actions {
		parts = append(parts, a.Kind.String()+" "+a.Node)
	}
	return strings.Join(parts, ", ")
}

// byName keys servers by name, keeping the one Observe keeps when a name has several.
func byName(servers []ServerView) map[string]ServerView {
	groups := map[string][]ServerView{}
	for _, s := range servers {
		groups[s.Name] = append(groups[s.Name], s)
	}
	m := make(map[string]ServerView, len(groups))
	for name, g := range groups {
		m[name], _ = pickServer(append([]ServerView(nil), g...))
	}
	return m
}

func byRancherName(nodes []RancherNodeView) map[string]RancherNodeView {
	m := make(map[string]RancherNodeView, len(nodes))
	for _, n := range nodes {
		m[n.Name] = n
	}
	return m
}
