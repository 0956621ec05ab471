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

	"github.com/waldur/site-agent/internal/sim/nodeemu"
)

// rke2Nodes plays the VMs of bootstrap rke2 clusters (newRKE2World with withBootstrap("rke2")):
// one emulated RKE2 cluster per Waldur cluster (by the node's inventory label), each VM joining
// under its fixed IP as its cloud-init would (nodeemu.Cluster.BootRKE2: Vault, the import
// manifest, RKE2's join rules, the cluster agent reporting to the Rancher simulator). A VM that
// disappears from Nova leaves its cluster, its Node with it.
type rke2Nodes struct {
	mu       sync.Mutex
	clusters map[string]*nodeemu.Cluster // by cluster UUID
	etcds    map[string]nodeemu.Etcd     // bootstrap rancher: each cluster's etcd, by cluster UUID
	live     map[string]liveVM           // server id → the node it runs
	joins    []string                    // "<node> → <server URL> (<target node>)" of each joining node
	refused  []string                    // joins RKE2 refused
	stale    []string                    // joins through an address that was no live server VM's
}

type liveVM struct{ cluster, name, role, addr string }

const labelCluster = "rke2.site-agent.waldur.com/cluster"

func newRKE2Nodes() *rke2Nodes {
	return &rke2Nodes{clusters: map[string]*nodeemu.Cluster{}, etcds: map[string]nodeemu.Etcd{}, live: map[string]liveVM{}}
}

// boot boots one ACTIVE VM into its cluster.
func (r *rke2Nodes) boot(ctx context.Context, hc *http.Client, vaultURL string, b nodeemu.Boot, s cloudServer) error {
	uuid := b.Labels[labelCluster]
	if uuid == "" || len(s.FixedIPs) == 0 {
		return fmt.Errorf("%s: no cluster label or no address", s.Name)
	}
	r.mu.Lock()
	c := r.clusters[uuid]
	if c == nil {
		c = nodeemu.NewCluster("")
		r.clusters[uuid] = c
	}
	target := r.checkTargetLocked(uuid, b)
	r.mu.Unlock()
	err := c.BootRKE2(ctx, hc, vaultURL, b, s.FixedIPs[0])
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, nodeemu.ErrRefused) {
		r.refused = append(r.refused, err.Error())
	}
	if err != nil {
		return err
	}
	r.live[s.ID] = liveVM{cluster: uuid, name: b.NodeName, role: b.Role, addr: s.FixedIPs[0]}
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

// vmsGone takes the nodes of deleted VMs out of their clusters.
func (r *rke2Nodes) vmsGone(servers []cloudServer) {
	exists := map[string]bool{}
	for _, s := range servers {
		exists[s.ID] = true
	}
	r.mu.Lock()
	var gone []liveVM
	for id, v := range r.live {
		if !exists[id] {
			gone = append(gone, v)
			delete(r.live, id)
		}
	}
	r.mu.Unlock()
	for _, v := range gone {
		if c := r.cluster(v.cluster); c != nil {
			c.Remove(v.name)
		} else if e := r.etcd(v.cluster); e != nil && v.role == "server" {
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
		e = nodeemu.NewMemEtcd()
		r.etcds[uuid] = e
	}
	r.live[s.ID] = liveVM{cluster: uuid, name: b.NodeName, role: b.Role}
	r.mu.Unlock()
	if b.Role != "server" {
		return nil
	}
	return e.Add(b.NodeName)
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
			if strings.TrimSuffix(m, "(dead)") == node {
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
