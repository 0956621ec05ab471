package rke2

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// A cluster's health after it is made (issue 17 item 10): what each node is doing, whether the
// cluster can serve, and which NotReady nodes have waited long enough to be replaced. Pure
// functions over the observed nodes; the backend reports them (health_pass.go).

// NodeState is one node as the resource's backend metadata shows it.
type NodeState struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// VM is the Nova status (ACTIVE, ERROR, …), "gone" when there is no VM.
	VM string `json:"vm_state"`
	// Kubernetes is the Node's readiness: Ready, NotReady, Unknown (the kubelet stopped
	// reporting), unregistered (Rancher does not list it), or Rancher's state when it shows
	// no Ready condition.
	Kubernetes string `json:"kubernetes"`
	// NotReadySince is when a node that is not Ready became so (RFC 3339; "" for a Ready node
	// or when Rancher does not say).
	NotReadySince string `json:"not_ready_since,omitempty"`
	Version       string `json:"version,omitempty"`
}

// ClusterHealth is a cluster's condition as a whole.
type ClusterHealth struct {
	// Serving: etcd has quorum (more than half of the servers Ready) and, when the cluster has
	// agents, at least one agent is Ready. Otherwise Reason says why.
	Serving                     bool
	Reason                      string
	Servers, ReadyServers       int
	Agents, ReadyAgents         int
	Nodes                       []NodeState
	notReadyServers, downAgents []string
}

// nodeReady: the VM runs and the Kubernetes Node is Ready (Rancher's Ready condition, or its
// state "active" when it shows none). A cordoned or draining node is still Ready: it serves.
func nodeReady(n *Node) bool {
	if n.VM != "ACTIVE" || n.Rancher == "" {
		return false
	}
	if n.Ready != "" {
		return n.Ready == "True"
	}
	return n.Rancher == "active"
}

// nodeNotReady: the Node is known to be not Ready — its Ready condition False or Unknown, or,
// without one, Rancher's state "unavailable". A node not registered yet is not NotReady.
func nodeNotReady(n *Node) bool {
	if n.Ready != "" {
		return n.Ready != "True"
	}
	return n.Rancher == "unavailable"
}

// Assess judges the observed nodes of a cluster. Nodes on their way out (StageRemove) count
// as servers for the quorum (their etcd member stays until it is removed) but not as agents.
func Assess(nodes []Node) ClusterHealth {
	var h ClusterHealth
	for i := range nodes {
		n := &nodes[i]
		h.Nodes = append(h.Nodes, stateOf(n))
		ready := nodeReady(n)
		switch {
		case n.Role == RoleServer && n.VM != "":
			h.Servers++
			if ready {
				h.ReadyServers++
			} else {
				h.notReadyServers = append(h.notReadyServers, n.Name)
			}
		case n.Role == RoleAgent && n.VM != "" && n.Stage != StageRemove:
			h.Agents++
			if ready {
				h.ReadyAgents++
			} else {
				h.downAgents = append(h.downAgents, n.Name)
			}
		}
	}
	sort.Slice(h.Nodes, func(i, j int) bool { return h.Nodes[i].Name < h.Nodes[j].Name })
	h.Serving, h.Reason = h.verdict()
	return h
}

func (h *ClusterHealth) verdict() (bool, string) {
	switch {
	case h.Servers == 0:
		return false, "the cluster has no server node: the Kubernetes API is gone"
	case h.ReadyServers == 0:
		return false, fmt.Sprintf("no server node is ready (%s): etcd has no quorum and the Kubernetes API is unreachable",
			strings.Join(h.notReadyServers, ", "))
	case 2*h.ReadyServers <= h.Servers:
		return false, fmt.Sprintf("etcd has no quorum: %d of %d server nodes ready (%s not ready); the Kubernetes API cannot serve",
			h.ReadyServers, h.Servers, strings.Join(h.notReadyServers, ", "))
	case h.Agents > 0 && h.ReadyAgents == 0:
		return false, fmt.Sprintf("no agent node is ready (%s): workloads cannot run", strings.Join(h.downAgents, ", "))
	}
	return true, ""
}

// Quorate: more than half of the servers are Ready.
func (h *ClusterHealth) Quorate() bool { return h.Servers > 0 && 2*h.ReadyServers > h.Servers }

// Degraded: the cluster serves but some node is not Ready.
func (h *ClusterHealth) Degraded() bool {
	return h.Serving && (h.ReadyServers < h.Servers || h.ReadyAgents < h.Agents)
}

func stateOf(n *Node) NodeState {
	st := NodeState{Name: n.Name, Role: n.Role.String(), VM: n.VM, Version: n.Version}
	if st.VM == "" {
		st.VM = "gone"
	}
	switch {
	case n.Rancher == "":
		st.Kubernetes = "unregistered"
	case n.Ready == "True":
		st.Kubernetes = "Ready"
	case n.Ready == "False":
		st.Kubernetes = "NotReady"
	case n.Ready == "Unknown":
		st.Kubernetes = "Unknown"
	case n.Rancher == "active":
		st.Kubernetes = "Ready"
	case n.Rancher == "unavailable":
		st.Kubernetes = "NotReady"
	default:
		st.Kubernetes = n.Rancher
	}
	if nodeNotReady(n) && !n.ReadySince.IsZero() {
		st.NotReadySince = n.ReadySince.UTC().Format(time.RFC3339)
	}
	return st
}

// markUnresponsive flags nodes whose Node has been NotReady for longer than after: they are
// replaced like a VM in ERROR (servers one at a time, each etcd member removed first). Only
// while the cluster keeps etcd quorum: without it a member cannot be removed, and a cluster
// whose nodes all went NotReady at once (a network outage, Rancher losing the cluster agent)
// is not rebuilt node by node. A node whose NotReady time Rancher does not show is never
// replaced for it.
func markUnresponsive(nodes []Node, now time.Time, after time.Duration) {
	if h := Assess(nodes); !h.Quorate() {
		return
	}
	for i := range nodes {
		n := &nodes[i]
		if n.VM == "ACTIVE" && n.Stage != StageRemove && nodeNotReady(n) && !n.ReadySince.IsZero() && now.Sub(n.ReadySince) > after {
			n.Unresponsive = true
		}
	}
}
