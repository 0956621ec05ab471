package rke2

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// memWorld is an in-memory OpenStack + Rancher + Vault behind the executor's ports, with time
// in ticks: a VM boots in bootTicks, its node registers bootTicks later once its cloud-init has
// logged in to Vault with its single-use secret id, a drain takes drainTicks. It asserts the
// install-order and quorum rules as the executor acts, and can fail calls transiently.
type memWorld struct {
	t        *testing.T
	mu       sync.Mutex
	rng      *rand.Rand
	faultPct int // % of calls that fail with a transient error (before doing anything)
	now      time.Time

	seq           int
	servers       map[string]*memVM // by id
	networks      map[string]bool   // cluster UUID → network exists
	clusters      map[string]*memCluster
	vault         map[string]*memSecret     // cluster UUID → its Vault objects (memvault_test.go)
	tokensRead    map[string]map[string]int // cluster UUID → tokens its booted nodes read → how many
	sids          map[string]bool           // issued, unused secret ids
	calls         map[string]int
	bindings      map[string]bool // "<management id> <role> <principal>"
	neverDrain    string          // a node that never drains
	terminating   map[string]bool // clusters being deleted as a whole (no drains then)
	dupCreate     int             // the next n CreateServer calls make two VMs (a retried create)
	refusedLogins int             // VMs whose single-use secret id had been used already
	failBoots     map[string]int  // node name → how many of its next VMs never register (bootstrap fails)
	failFIPs      int             // the next n creates asking for a floating IP make the VM, then fail (memworld_extra_test.go)

	upgraded        []string                   // nodes upgraded, in order (memworld_day2_test.go)
	etcd            map[string]map[string]bool // cluster UUID → etcd members (memetcd_test.go)
	etcdRemoveAsked map[string]int             // "<uuid>/<node>" → the tick its removal was asked
	tickCount       int
}

type memVM struct {
	view     ServerView
	age      int
	sidUsed  bool
	userData string
}

type memCluster struct {
	ref      ClusterRef
	spec     ProvisionSpec // as created
	mgmtID   string
	deleting int                 // ticks until gone; 0 = not deleting
	nodes    map[string]*memNode // by name
	paused   bool                // annotated reconcile=paused
}

type memNode struct {
	view  RancherNodeView
	age   int
	drain int // -1 not draining; else ticks drained so far
}

const (
	bootTicks  = 2
	drainTicks = 2
)

func newMemWorld(t *testing.T, seed uint64) *memWorld {
	return &memWorld{t: t, rng: rand.New(rand.NewPCG(seed, 99)), now: time.Unix(1_800_000_000, 0),
		servers: map[string]*memVM{}, networks: map[string]bool{}, clusters: map[string]*memCluster{},
		vault: map[string]*memSecret{}, tokensRead: map[string]map[string]int{}, sids: map[string]bool{}, calls: map[string]int{}, bindings: map[string]bool{}, terminating: map[string]bool{}, failBoots: map[string]int{}}
}

// call counts a call and fails it transiently at the fault rate.
func (w *memWorld) call(name string) error {
	w.calls[name]++
	if w.faultPct > 0 && w.rng.IntN(100) < w.faultPct {
		return failure.Transient(fmt.Errorf("%s: 503 service unavailable", name))
	}
	return nil
}

// tick advances time: VMs boot, booted VMs register (their cloud-init logs in to Vault once),
// registering nodes turn active, drains progress, deletions finish.
func (w *memWorld) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(time.Minute)
	w.tickCount++
	for _, vm := range w.servers {
		vm.age++
		if vm.view.Status == "BUILD" && vm.age >= bootTicks {
			vm.view.Status = "ACTIVE"
		}
		if vm.view.Status == "ACTIVE" && vm.age >= 2*bootTicks && !vm.sidUsed {
			if w.failBoots[vm.view.Name] > 0 { // cloud-init cannot reach Vault: nothing happens
				w.failBoots[vm.view.Name]--
				vm.sidUsed = true
				continue
			}
			w.register(vm)
		}
	}
	for uuid, c := range w.clusters {
		if c.deleting > 0 {
			if c.deleting--; c.deleting == 0 {
				delete(w.clusters, uuid)
			}
			continue
		}
		for _, n := range c.nodes {
			n.age++
			if n.view.State == "registering" && n.age >= bootTicks {
				n.view.State = "active"
			}
			if n.drain >= 0 && n.view.Labels[LabelCluster] != "" && n.view.Name != w.neverDrain {
				n.drain++
			}
		}
		w.rollUpgradeLocked(c)
	}
}

// register plays the VM's cloud-init: the single-use secret id in its user data logs in to
// Vault (refused the second time) and the node registers with Rancher under its inventory.
func (w *memWorld) register(vm *memVM) {
	inv, ok, err := InventoryFromMetadata(vm.view.Metadata)
	if !ok || err != nil {
		w.t.Fatalf("VM %s has no inventory: %v", vm.view.Name, err)
	}
	sid := ""
	for s := range w.sids {
		if strings.Contains(vm.userData, s) {
			sid = s
		}
	}
	if sid == "" { // a retried create's twin: its secret id was used by the other VM
		vm.sidUsed = true
		w.refusedLogins++
		return
	}
	v := w.vault[inv.Cluster]
	if v == nil || !v.access || v.data == nil {
		w.t.Fatalf("VM %s booted while its cluster's Vault objects are gone", vm.view.Name)
	}
	w.readToken(inv.Cluster, v.data[SecretKeyToken])
	delete(w.sids, sid)
	vm.sidUsed = true
	c := w.clusters[inv.Cluster]
	if c == nil || c.mgmtID == "" {
		return
	}
	c.nodes[vm.view.Name] = &memNode{view: RancherNodeView{ID: "m-" + vm.view.ID, Name: vm.view.Name, State: "registering", Labels: inv.Labels(),
		Ready: "True", ReadySince: w.now, Version: c.spec.K8sVersion}, drain: -1}
	if inv.Role == RoleServer {
		w.etcdJoin(inv.Cluster, vm.view.Name)
	}
}

// ---- Infra ----

type memInfra struct{ w *memWorld }

func (m memInfra) Flavor(_ context.Context, name string) (Flavor, error) {
	return cloudFlavors.Flavor(context.Background(), name)
}

func (m memInfra) EnsureNetwork(_ context.Context, c ClusterRef) (NetworkInfo, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("EnsureNetwork"); err != nil {
		return NetworkInfo{}, err
	}
	w.networks[c.UUID] = true
	return NetworkInfo{NetworkID: "net-" + c.Name, SubnetID: "sub-" + c.Name}, nil
}

func (m memInfra) Servers(_ context.Context, c ClusterRef) ([]ServerView, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Servers"); err != nil {
		return nil, err
	}
	var out []ServerView
	for _, vm := range w.servers {
		if vm.view.Metadata[MetaCluster] == c.UUID {
			out = append(out, vm.view)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m memInfra) CreateServer(_ context.Context, c ClusterRef, _ NetworkInfo, req ServerRequest) (ServerView, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("CreateServer"); err != nil {
		return ServerView{}, err
	}
	w.checkCreate(c, req)
	n := 1
	if w.dupCreate > 0 {
		w.dupCreate--
		n = 2
	}
	var v ServerView
	for range n {
		w.seq++
		v = ServerView{ID: fmt.Sprintf("vm-%03d", w.seq), Name: req.Name, Status: "BUILD", Created: w.now,
			Metadata: req.Inventory.Metadata(), Address: fmt.Sprintf("10.0.0.%d", 10+w.seq)}
		w.servers[v.ID] = &memVM{view: v, userData: string(req.UserData.Bytes())}
		w.checkNoVaultData(req)
	}
	return w.floatingIP(v, req)
}

// checkCreate asserts the install order: no agent before every server is ready, no joining
// server before the initial one is ready.
func (w *memWorld) checkCreate(c ClusterRef, req ServerRequest) {
	ready := map[string]bool{}
	if cl := w.clusters[c.UUID]; cl != nil {
		for _, n := range cl.nodes {
			ready[n.view.Name] = n.view.State == "active"
		}
	}
	for _, vm := range w.servers {
		inv, _, _ := InventoryFromMetadata(vm.view.Metadata)
		if inv.Cluster != c.UUID || inv.Role != RoleServer {
			continue
		}
		if req.Inventory.Role == RoleAgent && !ready[vm.view.Name] {
			w.t.Fatalf("agent %s created while server %s is not ready", req.Name, vm.view.Name)
		}
		if req.Inventory.Role == RoleServer && inv.Initial && !ready[vm.view.Name] && !req.Inventory.Initial {
			w.t.Fatalf("joining server %s created before the initial server %s is ready", req.Name, vm.view.Name)
		}
	}
}

func (m memInfra) DeleteServer(_ context.Context, c ClusterRef, s ServerView) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("DeleteServer"); err != nil {
		return err
	}
	if cl := w.clusters[c.UUID]; cl != nil {
		if n, ok := cl.nodes[s.Name]; ok && n.view.State == "active" && w.vmsNamed(s.Name) == 1 &&
			n.drain < drainTicks && !w.terminating[c.UUID] {
			w.t.Fatalf("server %s deleted before its node drained", s.Name)
		}
	}
	delete(w.servers, s.ID)
	if inv, ok, _ := InventoryFromMetadata(s.Metadata); ok && inv.Role == RoleServer {
		w.etcdVMDeleted(c.UUID, s.Name)
	}
	return nil
}

func (w *memWorld) vmsNamed(name string) int {
	n := 0
	for _, vm := range w.servers {
		if vm.view.Name == name {
			n++
		}
	}
	return n
}

func (m memInfra) ClearLeftovers(context.Context, ClusterRef) error { return nil }

func (m memInfra) TearDown(_ context.Context, c ClusterRef) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("TearDown"); err != nil {
		return err
	}
	for _, vm := range w.servers {
		if vm.view.Metadata[MetaCluster] == c.UUID {
			return fmt.Errorf("network of %s: server %s still uses it: %w", c.Name, vm.view.Name, failure.ErrNotReady)
		}
	}
	delete(w.networks, c.UUID)
	return nil
}

func (m memInfra) Diagnose(context.Context) []backends.Check {
	return []backends.Check{{Name: "openstack", OK: true, Detail: "in memory"}}
}

// ---- Rancher ----
