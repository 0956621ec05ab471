package ranchersim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Nodes of provisioned clusters (/v3/nodes), as Rancher's v3 API shows machines registered by
// the system-agent: state "registering" for Options.NodeActiveAfter, then "active"; labels are
// replaced with PUT; POST ?action=drain makes the node "draining", then "drained" with the
// condition Drained=True after Options.DrainDuration (unless HangDrain names it); DELETE
// removes it. The system-agent's own connection is not simulated: RegisterEndpoint is a
// simulator-only stand-in that a node emulator calls with the cluster registration token.

// RegisterEndpoint is the simulator-only path where an emulated node registers
// (POST, "Authorization: Bearer <registration token>", body {"nodeName", "roles", "labels",
// "cpu", "memoryMiB", "storageGiB"}).
const RegisterEndpoint = "/v3/sim/system-agent/register"

// simNode is one registered machine.
type simNode struct {
	id, clusterID, name string
	roles               []string
	labels              map[string]string
	registered          time.Time
	drainAt             time.Time // zero: no drain asked
	cpu                 int
	memMiB, storageGiB  int
	fromAgent           bool // reported by an imported cluster's agent (clusteragent.go)
	notReady            bool // its Node is NotReady (agent-reported nodes)
}

func (s *Server) nodeRoutes(p []string) map[string]route {
	switch {
	case len(p) == 1 && p[0] == "nodes":
		return map[string]route{http.MethodGet: {"nodes.list", s.listNodes}}
	case len(p) == 2 && p[0] == "nodes":
		id := p[1]
		return map[string]route{
			http.MethodGet:    {"node.get", func(w http.ResponseWriter, r *http.Request) { s.getNode(w, r, id) }},
			http.MethodPut:    {"node.update", func(w http.ResponseWriter, r *http.Request) { s.updateNode(w, r, id) }},
			http.MethodPost:   {"node.action", func(w http.ResponseWriter, r *http.Request) { s.nodeAction(w, r, id) }},
			http.MethodDelete: {"node.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteNode(w, r, id) }},
		}
	}
	return s.crtbRoutes(p)
}

// state is the node's Rancher state now.
func (n *simNode) state(o Options, hung bool) (string, bool) {
	now := time.Now()
	switch {
	case !n.drainAt.IsZero() && (hung || now.Before(n.drainAt.Add(o.DrainDuration))):
		return "draining", false
	case !n.drainAt.IsZero():
		return "drained", true
	case n.notReady:
		return "unavailable", false
	case now.Before(n.registered.Add(o.NodeActiveAfter)):
		return "registering", false
	}
	return "active", false
}

// nodeStateLocked is the node's state as Rancher shows it: a machine of a cluster whose plan
// cannot be rendered never gets one and stays "registering" (rkeconfig.go; s.mu held).
func (s *Server) nodeStateLocked(n *simNode) (string, bool) {
	state, drained := n.state(s.opts, s.hung[n.name])
	if state == "active" && !n.fromAgent && s.planBlockedLocked(n.clusterID) != "" {
		return "registering", false
	}
	return state, drained
}

func (s *Server) renderNode(base string, n *simNode) map[string]any {
	self := base + "/v3/nodes/" + n.id
	state, drained := s.nodeStateLocked(n)
	cond := "False"
	if drained {
		cond = "True"
	}
	has := func(r string) bool { return contains(n.roles, r) }
	capacity := map[string]string{"cpu": fmt.Sprint(n.cpu), "memory": fmt.Sprintf("%dMi", n.memMiB),
		"ephemeral-storage": fmt.Sprintf("%dGi", n.storageGiB), "pods": "110"}
	return map[string]any{"id": n.id, "type": "node", "baseType": "node", "clusterId": n.clusterID,
		"namespaceId": n.clusterID, "nodeName": n.name, "hostname": n.name, "requestedHostname": n.name,
		"labels": nonNil(n.labels), "state": state, "transitioning": map[bool]string{true: "yes", false: "no"}[state != "active" && state != "drained"],
		"etcd": has("etcd"), "controlPlane": has("controlplane"), "worker": has("worker"), "unschedulable": !n.drainAt.IsZero(),
		"conditions": []map[string]any{{"type": "Ready", "status": "True"}, {"type": "Drained", "status": cond}},
		"capacity":   capacity, "allocatable": capacity, "created": n.registered.UTC().Format(time.RFC3339),
		"links":   map[string]string{"self": self, "update": self, "remove": self},
		"actions": map[string]string{"drain": self + "?action=drain", "cordon": self + "?action=cordon"}}
}

func contains(l []string, v string) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

var nodeFilters = map[string]bool{"clusterId": true, "nodeName": true, "id": true, "state": true}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "nodes.list", nodeFilters)
	base := baseURL(r)
	s.mu.Lock()
	s.expireLocked()
	ids := make([]string, 0, len(s.nodes))
	for id := range s.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var items []map[string]any
	for _, id := range ids {
		if item := s.renderNode(base, s.nodes[id]); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "node", items)
}

func (s *Server) nodeLocked(w http.ResponseWriter, id string) *simNode {
	s.expireLocked()
	n := s.nodes[id]
	if n == nil {
		writeError(w, http.StatusNotFound, "NotFound", `nodes.management.cattle.io "`+id+`" not found`)
	}
	return n
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodeLocked(w, id); n != nil {
		writeJSON(w, http.StatusOK, s.renderNode(baseURL(r), n))
	}
}

// updateNode replaces labels and annotations (the only fields the backend writes).
func (s *Server) updateNode(w http.ResponseWriter, r *http.Request, id string) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "node.update", body, map[string]fieldKind{"labels": kStringMap, "annotations": kStringMap})
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeLocked(w, id)
	if n == nil {
		return
	}
	if l, ok := in["labels"].(map[string]string); ok {
		n.labels = l
	}
	writeJSON(w, http.StatusOK, s.renderNode(baseURL(r), n))
}

var drainFields = map[string]fieldKind{"deleteLocalData": kAny, "force": kAny, "gracePeriod": kAny, "ignoreDaemonSets": kAny, "timeout": kAny}

func (s *Server) nodeAction(w http.ResponseWriter, r *http.Request, id string) {
	action := r.URL.Query().Get("action")
	if action != "drain" && action != "cordon" {
		writeError(w, http.StatusNotFound, "NotFound", "action "+action+" not found")
		return
	}
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	if _, ok := s.input(w, "node."+action, body, drainFields); !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeLocked(w, id)
	if n == nil {
		return
	}
	if action == "drain" && n.drainAt.IsZero() {
		n.drainAt = time.Now()
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeLocked(w, id)
	if n == nil {
		return
	}
	delete(s.nodes, id)
	s.refreshStatsLocked(n.clusterID)
	writeJSON(w, http.StatusOK, s.renderNode(baseURL(r), n))
}

// handleRegister is the simulator-only stand-in for the system-agent's registration.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllow", "POST only")
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	name, _ := body["nodeName"].(string)
	if !dnsLabel.MatchString(name) {
		writeError(w, http.StatusUnprocessableEntity, "InvalidBodyContent", "nodeName must be a DNS label")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cid := s.clusterOfTokenLocked(token)
	if cid == "" {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "invalid registration token")
		return
	}
	if pc := s.provOfLocked(cid); pc != nil && pc.spec["rkeConfig"] == nil {
		writeError(w, http.StatusConflict, "Conflict", "cluster "+cid+" is imported (no spec.rkeConfig): its nodes come from its cluster agent")
		return
	}
	n := &simNode{clusterID: cid, name: name, registered: time.Now(), labels: map[string]string{}, cpu: 4, memMiB: 8192, storageGiB: 100}
	for _, v := range asList(body["roles"]) {
		n.roles = append(n.roles, fmt.Sprint(v))
	}
	if lm, ok := body["labels"].(map[string]any); ok {
		for k, v := range lm {
			n.labels[k] = fmt.Sprint(v)
		}
	}
	if v, ok := body["cpu"].(float64); ok {
		n.cpu = int(v)
	}
	if v, ok := body["memoryMiB"].(float64); ok {
		n.memMiB = int(v)
	}
	for id, old := range s.nodes { // a re-registering machine replaces its old record
		if old.clusterID == cid && old.name == name {
			delete(s.nodes, id)
		}
	}
	n.id = cid + ":" + s.st.newName("m-", func(x string) bool { return s.nodes[cid+":"+x] != nil })
	s.nodes[n.id] = n
	s.refreshStatsLocked(cid)
	writeJSON(w, http.StatusCreated, s.renderNode(baseURL(r), n))
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// refreshStatsLocked sums the cluster's nodes into its capacity and turns a provisioning
// cluster active once it has a node (s.mu held).
func (s *Server) refreshStatsLocked(cid string) {
	c := s.st.clusters[cid]
	if c == nil || c.imp == nil {
		return
	}
	var st clusterStats
	var cpu, mem, disk int
	for _, n := range s.nodes {
		if n.clusterID == cid {
			st.nodes++
			cpu, mem, disk = cpu+n.cpu, mem+n.memMiB, disk+n.storageGiB
		}
	}
	if st.nodes > 0 {
		st.capacity = map[string]string{"cpu": fmt.Sprint(cpu), "memory": fmt.Sprintf("%dMi", mem),
			"ephemeral-storage": fmt.Sprintf("%dGi", disk), "pods": fmt.Sprint(110 * st.nodes)}
		st.allocatable = st.capacity
		c.State = "active"
	}
	c.imp.stats = st
}

// HangDrain makes drains of the named node never finish (false lets them finish).
func (s *Server) HangDrain(node string, hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung[node] = hang
}
