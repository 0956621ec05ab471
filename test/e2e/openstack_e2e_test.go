package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// osOrders is the state the stages of TestOpenStackTenantOrders share.
type osOrders struct {
	*osWorld
	top       *testing.T // cleanups outlive the stages
	res       waldursim.Resource
	backendID string
	volume    string
}

// The built binary sells a real OpenStack tenant through the Waldur simulator: Create →
// membership → Update → report → pause/restore → Terminate (refused while a volume exists,
// then done).
func TestOpenStackTenantOrders(t *testing.T) {
	s := &osOrders{osWorld: newOSWorld(t), top: t}
	stages := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"create order", s.create},
		{"membership sync", s.membership},
		{"update order", s.update},
		{"report", s.report},
		{"pause and restore", s.pauseRestore},
		{"terminate", s.terminate},
	}
	for _, st := range stages {
		start := time.Now()
		ok := t.Run(st.name, func(t *testing.T) {
			s.env.t = t // the binary-running helpers fail the stage, not the parent
			st.run(t)
		})
		s.env.t = t
		t.Logf("%-20s %6.2fs", st.name, time.Since(start).Seconds())
		if !ok {
			return // later stages build on this one
		}
	}
}

func (s *osOrders) create(t *testing.T) {
	order := s.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: s.offering.UUID, ProjectUUID: s.project.UUID,
		PlanUUID: s.offering.Plans[0].UUID, Limits: map[string]float64{"cores": 2, "ram": 4, "storage": 10},
		Attributes: map[string]any{"name": "Halo sims"}})
	s.cleanupTenant(s.top, order.ResourceUUID, &s.backendID)
	s.once("order_process")
	s.res = resourceOf(t, s.env, order)
	s.backendID = s.res.BackendID
	if got, _ := s.sim.Order(order.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("create order: %s (%s)", got.State, got.ErrorMessage)
	}
	if q := s.quotas(t, s.backendID); q != [3]int{2, 4096, 10} {
		t.Fatalf("quotas cores/ram MB/gigabytes = %v, want [2 4096 10]", q)
	}
	if md := s.res.BackendMetadata; md["project_id"] != s.backendID || md["network_id"] == nil || md["router_id"] == nil {
		t.Fatalf("backend metadata: %v", md)
	}
}

func (s *osOrders) user(name string) string { return "sae2e-" + s.run + "-" + name }

// The team was added at creation; membership sync follows the Waldur project.
func (s *osOrders) membership(t *testing.T) {
	alice, bob := s.user("alice"), s.user("bob")
	if got := s.members(t, s.backendID); !slices.Equal(got, []string{alice, bob}) {
		t.Fatalf("members after create: %v", got)
	}
	s.sim.RemoveProjectMember(s.project.UUID, s.team[bob].UUID)
	s.once("membership_sync")
	if got := s.members(t, s.backendID); !slices.Equal(got, []string{alice}) {
		t.Fatalf("members after bob left: %v", got)
	}
}

func (s *osOrders) update(t *testing.T) {
	up := s.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: s.res.UUID,
		Limits: map[string]float64{"cores": 4, "ram": 8, "storage": 20}})
	s.once("order_process")
	if got, _ := s.sim.Order(up.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("update order: %s (%s)", got.State, got.ErrorMessage)
	}
	if q := s.quotas(t, s.backendID); q != [3]int{4, 8192, 20} {
		t.Fatalf("quotas after update = %v, want [4 8192 20]", q)
	}
}

// Alice makes a 3 GB volume in the tenant; the report sends the quota usage.
func (s *osOrders) report(t *testing.T) {
	s.volume = s.createVolumeAs(t, s.user("alice"), s.backendID, 3)
	s.once("report")
	usage := map[string]float64{}
	for _, u := range s.sim.ComponentUsages(s.res.UUID) {
		usage[u.Type] = u.Amount
	}
	if usage["storage"] != 3 || usage["cores"] != 0 || len(usage) != 3 {
		t.Fatalf("reported usage %v, want storage 3 and zero cores and ram", usage)
	}
}

func (s *osOrders) pauseRestore(t *testing.T) {
	s.sim.SetResourceFlags(s.res.UUID, true, false, false)
	s.once("membership_sync")
	if q := s.quotas(t, s.backendID); q != [3]int{0, 0, 3} {
		t.Fatalf("paused quotas = %v, want [0 0 3] (Cinder held at usage)", q)
	}
	if r, _ := s.sim.Resource(s.res.UUID); r.Limits["cores"] != 4 {
		t.Fatalf("pausing must not change Waldur's limits: %v", r.Limits)
	}
	s.sim.SetResourceFlags(s.res.UUID, false, false, false)
	s.once("membership_sync")
	if q := s.quotas(t, s.backendID); q != [3]int{4, 8192, 20} {
		t.Fatalf("restored quotas = %v, want [4 8192 20]", q)
	}
}

func (s *osOrders) terminate(t *testing.T) {
	term := s.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: s.res.UUID})
	s.once("order_process")
	got, _ := s.sim.Order(term.UUID)
	if got.State != waldursim.OrderErred || !strings.Contains(got.ErrorMessage, "volume") {
		t.Fatalf("terminate with a volume: %s (%q), want erred naming the volume", got.State, got.ErrorMessage)
	}
	if !s.projectExists(t, s.backendID) {
		t.Fatal("a refused terminate deleted the project")
	}
	s.forceDeleteVolume(t, s.volume)
	term = s.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: s.res.UUID})
	s.once("order_process")
	if got, _ := s.sim.Order(term.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("terminate: %s (%s)", got.State, got.ErrorMessage)
	}
	if s.projectExists(t, s.backendID) {
		t.Fatal("project still exists after terminate")
	}
}
