package ranchersim

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Nodes of imported clusters. Rancher's import manifest deploys the cluster agent, which
// connects to Rancher with the registration token from its cattle-credentials secret; Rancher
// then mirrors the downstream cluster's Nodes as v3 nodes (labels, Ready → "active", NotReady →
// "unavailable"), drops a v3 node whose Node is gone, and deletes the downstream Node when a v3
// node is deleted. The agent's tunnel is not simulated for this: ClusterAgentEndpoint is a
// simulator-only stand-in through which an emulated cluster agent reports the full list of its
// cluster's Nodes. Only imported clusters have such an agent: a provisioning cluster with an
// rkeConfig (Rancher provisions it; its machines register through the system agent) is refused,
// and so is a system-agent registration into an imported one.

// ClusterAgentEndpoint is the simulator-only path where an emulated cluster agent reports the
// downstream Nodes (POST, "Authorization: Bearer <registration token>", body {"nodes":
// [{"nodeName", "labels", "ready", "roles", "cpu", "memoryMiB", "kubeletVersion"}]}). Answers 204; 401 for an
// unknown token, 409 for a cluster that is not imported, 422 for a malformed body.
const ClusterAgentEndpoint = "/v3/sim/cluster-agent/nodes"

// agentNode is one reported downstream Node.
type agentNode struct {
	name    string
	labels  map[string]string
	ready   bool
	roles   []string
	cpu     int
	memMiB  int
	version string
}

func (s *Server) handleClusterAgent(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllow", "POST only")
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	nodes, msg := parseAgentNodes(body)
	if msg != "" {
		writeError(w, http.StatusUnprocessableEntity, "InvalidBodyContent", msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cid := s.clusterOfTokenLocked(token)
	if cid == "" {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "invalid registration token")
		return
	}
	if msg := s.notImportedLocked(cid); msg != "" {
		writeError(w, http.StatusConflict, "Conflict", msg)
		return
	}
	s.syncAgentNodesLocked(cid, nodes)
	w.WriteHeader(http.StatusNoContent)
}

func parseAgentNodes(body map[string]any) ([]agentNode, string) {
	raw, ok := body["nodes"].([]any)
	if !ok {
		return nil, "nodes must be a list"
	}
	out := make([]agentNode, 0, len(raw))
	seen := map[string]bool{}
	for _, item := range raw {
		m, _ := item.(map[string]any)
		name, _ := m["nodeName"].(string)
		if !dnsLabel.MatchString(name) || seen[name] {
			return nil, fmt.Sprintf("nodeName %q is not a DNS label or is listed twice", name)
		}
		seen[name] = true
		n := agentNode{name: name, labels: map[string]string{}, cpu: 4, memMiB: 8192}
		n.ready, _ = m["ready"].(bool)
		n.version, _ = m["kubeletVersion"].(string)
		if lm, ok := m["labels"].(map[string]any); ok {
			for k, v := range lm {
				n.labels[k] = fmt.Sprint(v)
			}
		}
		for _, v := range asList(m["roles"]) {
			n.roles = append(n.roles, fmt.Sprint(v))
		}
		if v, ok := m["cpu"].(float64); ok {
			n.cpu = int(v)
		}
		if v, ok := m["memoryMiB"].(float64); ok {
			n.memMiB = int(v)
		}
		out = append(out, n)
	}
	return out, ""
}

// clusterOfTokenLocked is the cluster a registration token belongs to ("" none; s.mu held).
func (s *Server) clusterOfTokenLocked(token string) string {
	cid := ""
	for _, t := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t.Token), []byte(token)) == 1 && s.st.clusters[t.ClusterID] != nil {
			cid = t.ClusterID
		}
	}
	return cid
}

// provOfLocked is the provisioning cluster whose management cluster is cid (nil: none; s.mu held).
func (s *Server) provOfLocked(cid string) *provCluster {
	for _, pc := range s.prov {
		if pc.managedID == cid {
			return pc
		}
	}
	return nil
}

// notImportedLocked says why cid has no cluster agent of an imported cluster ("" it may; s.mu held).
func (s *Server) notImportedLocked(cid string) string {
	c := s.st.clusters[cid]
	switch pc := s.provOfLocked(cid); {
	case pc != nil && pc.spec["rkeConfig"] != nil:
		return "cluster " + cid + " is provisioned by Rancher (spec.rkeConfig): its machines register through the system agent, not an import"
	case c.imp == nil || c.imp.agent != nil:
		return "cluster " + cid + " is not an imported cluster without a tunnel agent"
	}
	return ""
}

// syncAgentNodesLocked makes the cluster's agent-reported v3 nodes the reported Nodes: new ones
// register, reported labels are merged (labels set through the API stay, as Rancher pushes them
// to the Node), readiness follows the report, and nodes not reported go (s.mu held).
func (s *Server) syncAgentNodesLocked(cid string, nodes []agentNode) {
	byName := map[string]*simNode{}
	for _, n := range s.nodes {
		if n.clusterID == cid {
			byName[n.name] = n
		}
	}
	reported := map[string]bool{}
	for _, an := range nodes {
		reported[an.name] = true
		n := byName[an.name]
		if n == nil {
			n = &simNode{clusterID: cid, name: an.name, registered: time.Now(), labels: map[string]string{}, storageGiB: 100, fromAgent: true,
				readyChanged: time.Now()}
			n.id = cid + ":" + s.st.newName("m-", func(x string) bool { return s.nodes[cid+":"+x] != nil })
			s.nodes[n.id] = n
		}
		for k, v := range an.labels {
			n.labels[k] = v
		}
		for k, v := range n.apiLabels { // Rancher pushed them to the Node
			n.labels[k] = v
		}
		n.roles, n.cpu, n.memMiB, n.version = an.roles, an.cpu, an.memMiB, an.version
		n.setReady(an.ready)
	}
	for id, n := range s.nodes {
		if n.clusterID == cid && n.fromAgent && !reported[n.name] {
			delete(s.nodes, id)
		}
	}
	s.refreshStatsLocked(cid)
}
