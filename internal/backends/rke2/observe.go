package rke2

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// ServerView is what the planner needs of a Nova server (the backend fills it from gophercloud).
type ServerView struct {
	ID       string
	Name     string
	Status   string // Nova status: ACTIVE, BUILD, ERROR, …
	Created  time.Time
	Metadata map[string]string
	Address  string // the fixed IP on the cluster network (join targets in bootstrap rke2)
	// FloatingIP is a floating address Nova shows for the VM ("" none, or not shown yet).
	FloatingIP string
	// Volumes is how many volumes Nova shows attached (compare MetaVolumes).
	Volumes int
}

// RancherNodeView is what the planner needs of a Rancher node.
type RancherNodeView struct {
	ID     string
	Name   string // the node's hostname (requestedHostname / nodeName), equal to the VM's name
	State  string // Rancher runtime state
	Labels map[string]string
}

// Observed is one cluster as Nova and Rancher show it.
type Observed struct {
	Nodes []Node
	// Strays are surplus VMs of the same node (a create whose answer was lost and that was
	// sent again): the executor deletes them; the planner never sees them.
	Strays []ServerView
	// Foreign are Rancher nodes of the cluster without site-agent inventory and without a VM
	// of ours: reported (diagnostics), never touched.
	Foreign []string
}

// Observe joins a cluster's Nova servers and Rancher nodes into planner nodes by name. Servers
// and Rancher nodes of other clusters (or of none) are ignored. Broken inventory on one of the
// cluster's servers is an error: planning on a partial picture could create duplicates, so the
// caller must not plan until it is repaired.
func Observe(cluster string, servers []ServerView, rnodes []RancherNodeView) (Observed, error) {
	var obs Observed
	byName := map[string][]ServerView{}
	invs := map[string]Inventory{}
	var errs []error
	for _, s := range servers {
		inv, ok, err := InventoryFromMetadata(s.Metadata)
		switch {
		case !ok || (err == nil && inv.Cluster != cluster):
			continue
		case err != nil:
			if s.Metadata[MetaCluster] == cluster {
				errs = append(errs, fmt.Errorf("server %s (%s): %w", s.Name, s.ID, err))
			}
			continue
		}
		byName[s.Name] = append(byName[s.Name], s)
		invs[s.ID] = inv
	}
	if len(errs) > 0 {
		return obs, errors.Join(errs...)
	}
	ranch := indexRancher(cluster, rnodes)
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		keep, strays := pickServer(byName[name])
		obs.Strays = append(obs.Strays, strays...)
		n := Node{Name: name, Inventory: invs[keep.ID], VM: keep.Status}
		if r, ok := ranch[name]; ok {
			n.Rancher = r.State
			if inv, ok, err := InventoryFromLabels(r.Labels); ok && err == nil && inv.Stage == StageRemove {
				n.Stage = StageRemove // a removal once begun (on either side) is finished
			}
			delete(ranch, name)
		}
		obs.Nodes = append(obs.Nodes, n)
	}
	obs.addRancherOnly(cluster, ranch)
	return obs, nil
}

// indexRancher keys the cluster's Rancher nodes by name.
func indexRancher(cluster string, rnodes []RancherNodeView) map[string]RancherNodeView {
	out := make(map[string]RancherNodeView, len(rnodes))
	for _, r := range rnodes {
		if inv, ok, err := InventoryFromLabels(r.Labels); ok && err == nil && inv.Cluster != cluster {
			continue
		}
		out[r.Name] = r
	}
	return out
}

// addRancherOnly adds Rancher nodes without a VM: ours (by labels) become Gone nodes to forget,
// the rest are foreign.
func (obs *Observed) addRancherOnly(cluster string, ranch map[string]RancherNodeView) {
	names := make([]string, 0, len(ranch))
	for n := range ranch {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		r := ranch[name]
		inv, ok, err := InventoryFromLabels(r.Labels)
		if !ok || err != nil || inv.Cluster != cluster {
			obs.Foreign = append(obs.Foreign, name)
			continue
		}
		obs.Nodes = append(obs.Nodes, Node{Name: name, Inventory: inv, Rancher: r.State})
	}
}

// pickServer keeps the most advanced of several VMs with one name (ACTIVE before BUILD before
// anything else, then the oldest, then the lowest id) and returns the others as strays.
func pickServer(vms []ServerView) (ServerView, []ServerView) {
	rank := func(s ServerView) int {
		switch s.Status {
		case "ACTIVE":
			return 0
		case "BUILD":
			return 1
		case "ERROR":
			return 3
		}
		return 2
	}
	sort.Slice(vms, func(i, j int) bool {
		a, b := vms[i], vms[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.ID < b.ID
	})
	return vms[0], vms[1:]
}
