package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/waldur/site-agent/internal/sim/nodeemu"
)

// rke2Nodes plays the VMs of bootstrap rke2 clusters (newRKE2World with withBootstrap("rke2")):
// one emulated RKE2 cluster per Waldur cluster (by the node's inventory label), each VM joining
// under its fixed IP as its cloud-init would (nodeemu.Cluster.BootRKE2: Vault, the import
// manifest, RKE2's join rules, the cluster agent reporting to the Rancher simulator). A VM that
// disappears from Nova leaves its cluster, its Node with it.
type rke2Nodes struct {
	t    testing.TB
	real *realParts // tier 2: real etcd members and Nodes in a kube-apiserver (nil: emulated)

	mu       sync.Mutex
	clusters map[string]*nodeemu.Cluster // by cluster UUID
	etcds    map[string]nodeemu.Etcd     // bootstrap rancher: each cluster's etcd, by cluster UUID
	live     map[string]liveVM           // server id → the node it runs
	joins    []string                    // "<node> → <server URL> (<target node>)" of each joining node
	refused  []string                    // joins RKE2 refused
	stale    []string                    // joins through an address that was no live server VM's
}

type liveVM struct {
	id, cluster, name, role, addr string
	member                        bool // bootstrap rancher: the server's etcd member was added
	stopped                       bool // the VM stopped running (not ACTIVE)
}

const labelCluster = "rke2.site-agent.waldur.com/cluster"

func newRKE2Nodes(t testing.TB, real *realParts) *rke2Nodes {
	return &rke2Nodes{t: t, real: real, clusters: map[string]*nodeemu.Cluster{}, etcds: map[string]nodeemu.Etcd{}, live: map[string]liveVM{}}
}

// newEtcdLocked is a new cluster's etcd: real members in tier 2, else the model (r.mu held).
func (r *rke2Nodes) newEtcdLocked() nodeemu.Etcd {
	if r.real != nil {
		return r.real.newEtcd(r.t)
	}
	return nodeemu.NewMemEtcd()
}

// clusterLocked is the emulated RKE2 cluster of a Waldur cluster, made on first use (r.mu held).
func (r *rke2Nodes) clusterLocked(uuid string) *nodeemu.Cluster {
	c := r.clusters[uuid]
	if c == nil {
		c = nodeemu.NewClusterWithEtcd("", r.newEtcdLocked())
		if r.real != nil {
			c.UseKube(r.real.kube.Clientset, nodeGrace)
			r.t.Cleanup(c.Close)
		}
		r.clusters[uuid] = c
	}
	return c
}

// boot boots one ACTIVE VM into its cluster (the emulator reads its script).
func (r *rke2Nodes) boot(ctx context.Context, hc *http.Client, vaultURL string, b nodeemu.Boot, s cloudServer) error {
	return r.join(b, s, func(c *nodeemu.Cluster) error { return c.BootRKE2(ctx, hc, vaultURL, b, s.FixedIPs[0]) })
}

// start starts RKE2 as the VM's script installed it (tier 2: the script ran).
func (r *rke2Nodes) start(hc *http.Client, in nodeemu.Installed, s cloudServer) error {
	return r.join(in.Boot, s, func(c *nodeemu.Cluster) error { return c.StartRKE2(hc, in, s.FixedIPs[0]) })
}

// join runs a node's join into its cluster and records it.
func (r *rke2Nodes) join(b nodeemu.Boot, s cloudServer, run func(*nodeemu.Cluster) error) error {
	uuid := b.Labels[labelCluster]
	if uuid == "" || len(s.FixedIPs) == 0 {
		return fmt.Errorf("%s: no cluster label or no address", s.Name)
	}
	r.mu.Lock()
	c := r.clusterLocked(uuid)
	target := r.checkTargetLocked(uuid, b)
	r.mu.Unlock()
	err := run(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, nodeemu.ErrRefused) {
		r.refused = append(r.refused, err.Error())
	}
	if err != nil {
		return err
	}
	r.live[s.ID] = liveVM{id: s.ID, cluster: uuid, name: b.NodeName, role: b.Role, addr: s.FixedIPs[0]}
	if b.ServerURL != "" {
		r.joins = append(r.joins, b.NodeName+" → "+b.ServerURL+" ("+target+")")
	}
	return nil
}

// checkTargetLocked names the live server VM a joining node points at, recording a join through
// any other address (r.mu held).
func (r *rke2Nodes) checkTargetLocked(uuid string, b nodeemu.Boot) string {
	if b.ServerURL == "" {
		return ""
	}
	u, err := url.Parse(b.ServerURL)
	if err == nil {
		for _, v := range r.live {
			if v.cluster == uuid && v.role == "server" && v.addr == u.Hostname() {
				return v.name
			}
		}
	}
	r.stale = append(r.stale, b.NodeName+" → "+b.ServerURL)
	return "no live server"
}

// vmsGone takes the nodes of deleted VMs out of their clusters, and stops those of VMs that
// stopped running (Nova ERROR, SHUTOFF…): their kubelet and etcd member die with them.
func (r *rke2Nodes) vmsGone(servers []cloudServer) {
	status := map[string]string{}
	for _, s := range servers {
		status[s.ID] = s.Status
	}
	r.mu.Lock()
	var gone, stopped []liveVM
	for id, v := range r.live {
		switch st, ok := status[id]; {
		case !ok:
			gone = append(gone, v)
			delete(r.live, id)
		case st != "ACTIVE" && !v.stopped:
			v.stopped = true
			r.live[id] = v
			stopped = append(stopped, v)
		}
	}
	r.mu.Unlock()
	for _, v := range append(stopped, gone...) {
		if r.real != nil {
			r.real.kubelets.Stop(v.name)
		}
		c, e := r.cluster(v.cluster), r.etcd(v.cluster)
		switch {
		case c != nil && v.stopped && status[v.id] != "":
			c.Stop(v.name)
		case c != nil:
			c.Remove(v.name)
		case e != nil && v.role == "server":
			e.Down(v.name)
		}
	}
}

// registered records a bootstrap-rancher node that registered with Rancher: a server becomes a
// member of its cluster's etcd (Rancher's system agent installs RKE2, whose etcd joins).
func (r *rke2Nodes) registered(b nodeemu.Boot, s cloudServer) error {
	uuid := b.Labels[labelCluster]
	r.mu.Lock()
	e := r.etcds[uuid]
	if e == nil {
		e = r.newEtcdLocked()
		r.etcds[uuid] = e
	}
	v, again := r.live[s.ID] // a registration tried again
	r.live[s.ID] = liveVM{id: s.ID, cluster: uuid, name: b.NodeName, role: b.Role, member: v.member}
	r.mu.Unlock()
	if b.Role != "server" || again && v.member {
		return nil
	}
	if err := e.Add(b.NodeName); err != nil {
		return err
	}
	r.mu.Lock()
	v = r.live[s.ID]
	v.member = true
	r.live[s.ID] = v
	r.mu.Unlock()
	return nil
}

func (r *rke2Nodes) etcd(uuid string) nodeemu.Etcd {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.etcds[uuid]
}

// removeMember plays RKE2's managed-etcd controller for the Rancher simulator: the node's etcd
// member is removed from whichever cluster has it.
func (r *rke2Nodes) removeMember(_, node string) (bool, error) {
	r.mu.Lock()
	var all []nodeemu.Etcd
	for _, c := range r.clusters {
		all = append(all, c.Etcd())
	}
	for _, e := range r.etcds {
		all = append(all, e)
	}
	r.mu.Unlock()
	for _, e := range all {
		for _, m := range e.Members() {
			if name, _, _ := strings.Cut(m, "("); name == node {
				return e.Remove(node)
			}
		}
	}
	return true, nil
}

// members lists the etcd members of the cluster (either mode).
func (r *rke2Nodes) members(uuid string) []string {
	if c := r.cluster(uuid); c != nil {
		return c.Etcd().Members()
	}
	if e := r.etcd(uuid); e != nil {
		return e.Members()
	}
	return nil
}

// etcdWrites are the writer's writes to the cluster's real etcd (real: it is real).
func (r *rke2Nodes) etcdWrites(uuid string) (ok, failed int, real bool) {
	e := r.etcd(uuid)
	if c := r.cluster(uuid); c != nil {
		e = c.Etcd()
	}
	if p, isReal := e.(*nodeemu.EtcdProcs); isReal {
		ok, failed = p.Writes()
		return ok, failed, true
	}
	return 0, 0, false
}

func (r *rke2Nodes) cluster(uuid string) *nodeemu.Cluster {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clusters[uuid]
}

// problems lists refused joins, joins through no live server and failed agent reports.
func (r *rke2Nodes) problems() []string {
	r.mu.Lock()
	out := append(append([]string(nil), r.refused...), r.stale...)
	clusters := make([]*nodeemu.Cluster, 0, len(r.clusters))
	for _, c := range r.clusters {
		clusters = append(clusters, c)
	}
	r.mu.Unlock()
	for _, c := range clusters {
		out = append(out, c.ReportErrors()...)
		out = append(out, c.Etcd().Problems()...)
	}
	r.mu.Lock()
	for _, e := range r.etcds {
		out = append(out, e.Problems()...)
	}
	r.mu.Unlock()
	sort.Strings(out)
	return out
}

// joinLog is every joining node with the server it joined through, in boot order.
func (r *rke2Nodes) joinLog() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.joins...)
}

// requestSummary counts the requests the simulators served so far (agent and emulated nodes).
func (w *rke2World) requestSummary() string {
	sum := func(m map[string]int) int {
		n := 0
		for _, c := range m {
			n += c
		}
		return n
	}
	return fmt.Sprintf("rancher %d, openstack %d, vault %d", sum(w.rs.Calls()), sum(w.os.Calls()), w.vs.TotalCalls())
}
