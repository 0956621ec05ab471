package ranchersim

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kubernetes upgrades, as Rancher rolls them:
//
//   - a provisioned cluster (spec.rkeConfig): a new spec.kubernetesVersion makes the planner
//     upgrade the machines, etcd and control-plane ones first, controlPlaneConcurrency at a
//     time, then workers workerConcurrency at a time (rkeConfig.upgradeStrategy; default 1, "0"
//     all at once, "N%" a share), each drained when its drain options say so (rancher v2.12
//     pkg/capr/planner/planner.go: kubeletVersionUpToDate, the concurrency checks; the system
//     agent then runs the new release, modelled by the simulator itself);
//   - an imported RKE2 cluster: PUT /v3/clusters/<id> with rke2Config {kubernetesVersion,
//     rke2upgradeStrategy {serverConcurrency, workerConcurrency, drainServerNodes,
//     drainWorkerNodes}} (pkg/apis/management.cattle.io/v3 k3s_base_types.go) makes Rancher
//     deploy the system-upgrade-controller's master and worker plans with those concurrencies
//     (pkg/controllers/management/k3sbasedupgrade deployPlans.go); the worker plan waits for the
//     master plan. The v3 update merges the fields given and requires the cluster's name
//     (norman store/proxy/proxy_store.go Update; pkg/api/norman/store/cluster/cluster_store.go).
//     The upgrade job on the node is the Upgrader's (the node emulator: its kubelet then
//     reports the release).
//
// A node being upgraded shows "cordoned" (unschedulable, still Ready) for
// Options.UpgradeStepDuration, then reports the new kubelet version.

// Upgrader runs the upgrade job on an imported cluster's node: it makes the node run version.
type Upgrader func(clusterID, node, version string) error

// SetUpgrader sets who upgrades imported clusters' nodes (nil: the simulator records the
// version itself, which the next cluster agent report would undo).
func (s *Server) SetUpgrader(f Upgrader) {
	s.mu.Lock()
	s.upgrader = f
	s.mu.Unlock()
}

// rollout is an upgrade in progress.
type rollout struct {
	gen                    int
	version                string
	serverConc, workerConc string
}

// concurrency is how many of total nodes go at once ("" and "1" one, "0" all, "N%" a share).
func concurrency(v string, total int) int {
	switch {
	case v == "":
		return 1
	case strings.HasSuffix(v, "%"):
		p, _ := strconv.Atoi(strings.TrimSuffix(v, "%"))
		return max(1, int(math.Ceil(float64(total*p)/100)))
	}
	n, _ := strconv.Atoi(v)
	if n == 0 {
		return max(total, 1)
	}
	return n
}

// startRolloutLocked begins rolling cid to ro.version, replacing any rollout in progress (s.mu held).
func (s *Server) startRolloutLocked(cid string, ro rollout) {
	if s.rollouts == nil {
		s.rollouts = map[string]*rollout{}
	}
	if cur := s.rollouts[cid]; cur != nil && cur.version == ro.version && cur.serverConc == ro.serverConc && cur.workerConc == ro.workerConc {
		return
	}
	s.rolloutGen++
	ro.gen = s.rolloutGen
	s.rollouts[cid] = &ro
	go s.roll(cid, ro.gen)
}

// roll upgrades the cluster's nodes batch by batch until none is left or a newer rollout
// replaces this one.
func (s *Server) roll(cid string, gen int) {
	for {
		batch, ro := s.nextBatch(cid, gen)
		if ro == nil {
			return
		}
		time.Sleep(s.opts.UpgradeStepDuration)
		for _, n := range batch {
			s.upgradeNode(cid, n, ro.version)
		}
	}
}

// nextBatch marks the next nodes to upgrade cordoned and returns them (nil rollout: done or replaced).
func (s *Server) nextBatch(cid string, gen int) ([]*simNode, *rollout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ro := s.rollouts[cid]
	if ro == nil || ro.gen != gen {
		return nil, nil
	}
	var servers, workers, todoS, todoW []*simNode
	for _, n := range s.nodes {
		if n.clusterID != cid {
			continue
		}
		isServer := contains(n.roles, "etcd") || contains(n.roles, "controlplane")
		if isServer {
			servers = append(servers, n)
		} else {
			workers = append(workers, n)
		}
		if n.version != ro.version {
			if isServer {
				todoS = append(todoS, n)
			} else {
				todoW = append(todoW, n)
			}
		}
	}
	todo, conc, role := todoS, concurrency(ro.serverConc, len(servers)), "server"
	if len(todoS) == 0 { // the worker plan waits for the master plan
		todo, conc, role = todoW, concurrency(ro.workerConc, len(workers)), "agent"
	}
	if len(todo) == 0 {
		delete(s.rollouts, cid)
		return nil, nil
	}
	sort.Slice(todo, func(i, j int) bool { return todo[i].name < todo[j].name })
	batch := todo[:min(conc, len(todo))]
	for _, n := range batch {
		n.upgrading = true
	}
	if s.upgradeMax == nil {
		s.upgradeMax = map[string]int{}
	}
	s.upgradeMax[role] = max(s.upgradeMax[role], len(batch))
	return batch, ro
}

// upgradeNode runs the upgrade job on one node; a failed job is tried again in the next batch.
func (s *Server) upgradeNode(cid string, n *simNode, version string) {
	s.mu.Lock()
	up, fromAgent, name := s.upgrader, n.fromAgent, n.name
	s.mu.Unlock()
	var err error
	if fromAgent && up != nil {
		err = up(cid, name, version) // outside the lock: the node's agent reports back
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n.upgrading = false
	if err != nil {
		s.violationLocked("upgrade job on %s/%s: %v", cid, name, err)
		return
	}
	if !fromAgent || up == nil {
		n.version = version
	}
	s.upgradeLog = append(s.upgradeLog, fmt.Sprintf("%s %s %s", cid, name, version))
}

// UpgradeLog lists "<cluster id> <node> <version>" of every node upgrade, in order.
func (s *Server) UpgradeLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.upgradeLog...)
}

// UpgradeBatchMax is the largest number of nodes an upgrade cordoned at once, by role ("server",
// "agent"): what the upgrade strategy's concurrency made of each plan.
func (s *Server) UpgradeBatchMax() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.upgradeMax)
}

// provUpgradeLocked starts the rollout a provisioned cluster's new spec asks for (s.mu held).
func (s *Server) provUpgradeLocked(pc *provCluster, old map[string]any) {
	rke, ok := pc.spec["rkeConfig"].(map[string]any)
	if !ok || pc.managedID == "" || pc.spec["kubernetesVersion"] == old["kubernetesVersion"] {
		return
	}
	u, _ := rke["upgradeStrategy"].(map[string]any)
	cp, _ := u["controlPlaneConcurrency"].(string)
	wk, _ := u["workerConcurrency"].(string)
	v, _ := pc.spec["kubernetesVersion"].(string)
	s.startRolloutLocked(pc.managedID, rollout{version: v, serverConc: cp, workerConc: wk})
}

var (
	clusterUpdateFields = map[string]fieldKind{"name": kString, "description": kString, "rke2Config": kObject}
	rke2ConfigFields    = map[string]fieldKind{"kubernetesVersion": kString, "rke2upgradeStrategy": kObject}
	rke2StrategyFields  = map[string]fieldKind{"serverConcurrency": kInt, "workerConcurrency": kInt, "drainServerNodes": kBool, "drainWorkerNodes": kBool}
)

// updateCluster is PUT /v3/clusters/<id>: the name is required; rke2Config upgrades an
// imported cluster.
func (s *Server) updateCluster(w http.ResponseWriter, r *http.Request, id string) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "cluster.update", body, clusterUpdateFields)
	if !ok {
		return
	}
	if name, _ := in["name"].(string); name == "" {
		fieldError(w, "MissingRequired", "Cluster name", "")
		return
	}
	var cfg, strategy map[string]any
	if raw, ok := in["rke2Config"]; ok {
		var msg string
		if cfg, msg = checkObject("rke2Config", raw, rke2ConfigFields); msg == "" && cfg["rke2upgradeStrategy"] != nil {
			strategy, msg = checkObject("rke2Config.rke2upgradeStrategy", cfg["rke2upgradeStrategy"], rke2StrategyFields)
		}
		if msg != "" {
			fieldError(w, "InvalidFormat", "rke2Config", msg)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[id]
	if c == nil {
		writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+id+"\" not found")
		return
	}
	if cfg != nil {
		s.rke2ConfigLocked(c, cfg, strategy)
	}
	writeJSON(w, http.StatusOK, renderCluster(baseURL(r), c))
}

// rke2ConfigLocked applies an imported cluster's rke2Config (s.mu held).
func (s *Server) rke2ConfigLocked(c *Cluster, cfg, strategy map[string]any) {
	if pc := s.provOfLocked(c.ID); pc != nil && pc.spec["rkeConfig"] != nil {
		s.violationLocked("cluster.update: rke2Config on %s, a cluster Rancher provisions: its version is the provisioning cluster's spec.kubernetesVersion", c.ID)
		return
	}
	v, _ := cfg["kubernetesVersion"].(string)
	if v == "" {
		return
	}
	conc := func(k string) string {
		if f, ok := strategy[k].(float64); ok {
			return strconv.Itoa(int(f))
		}
		return ""
	}
	c.rke2Version = v
	s.startRolloutLocked(c.ID, rollout{version: v, serverConc: conc("serverConcurrency"), workerConc: conc("workerConcurrency")})
}
