package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

func TestMembershipSyncsTeamStatusAndRecovers(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	a := e.world.CreateOrder("alpha", map[string]float64{"cpu": 2})
	b := e.world.CreateOrder("beta", map[string]float64{"cpu": 2})
	e.once("order_process")
	aRes := resourceOf(t, e, a)
	bRes := resourceOf(t, e, b)

	// Drift: bob leaves the project, a stranger was added on the backend by hand.
	e.sim.RemoveProjectMember(e.world.Project.UUID, e.world.Users[1].UUID)
	be := e.backend()
	if err := addByHand(be, aRes.BackendID, "mallory"); err != nil {
		t.Fatal(err)
	}
	e.sim.SetResourceFlags(bRes.UUID, true, false, false) // beta paused
	e.sim.AddResource(waldursim.Resource{Name: "broken", OfferingUUID: e.world.Offering.UUID, ProjectUUID: e.world.Project.UUID,
		BackendID: "phys_gone", State: waldursim.ResourceOK}) // backend object missing
	e.sim.ResetCalls()
	r := e.run("-m", "membership_sync", "-c", e.config, "--once")
	if r.code == 0 {
		t.Fatalf("a resource whose backend object is missing must fail the pass: %s", r)
	}

	objs := map[string][]string{}
	paused := map[string]bool{}
	for _, o := range e.objects() {
		objs[o.ID] = o.Members
		paused[o.ID] = o.Paused
	}
	want := []string{"phys_alice", "phys_carol"}
	if !slices.Equal(objs[aRes.BackendID], want) || !slices.Equal(objs[bRes.BackendID], want) {
		t.Fatalf("members: %v, want %v on both", objs, want)
	}
	if !paused[bRes.BackendID] || paused[aRes.BackendID] {
		t.Fatalf("paused flags: %v", paused)
	}
	var broken waldursim.Resource
	for _, res := range e.sim.Resources() {
		if res.Name == "broken" {
			broken = res
		}
	}
	if broken.State != waldursim.ResourceErred || broken.ErrorMessage == "" {
		t.Fatalf("missing backend object should mark the resource erred with a reason: %s %q", broken.State, broken.ErrorMessage)
	}
	if calls := e.sim.Calls(); calls["marketplace_provider_resources_team_list"] != 1 {
		t.Errorf("one team fetch per project per pass expected, got %d", calls["marketplace_provider_resources_team_list"])
	}

	// Unpause and re-create the missing object: the erred resource recovers to OK.
	e.sim.SetResourceFlags(bRes.UUID, false, false, false)
	if err := createByHand(be, "phys_gone", broken.UUID); err != nil {
		t.Fatal(err)
	}
	e.once("membership_sync")
	for _, o := range e.objects() {
		if o.Paused {
			t.Errorf("%s still paused", o.ID)
		}
	}
	if res, _ := e.sim.Resource(broken.UUID); res.State != waldursim.ResourceOK {
		t.Fatalf("erred resource did not recover: %s", res.State)
	}

	// A quiet pass changes nothing on the backend and sends no writes to Waldur.
	before := len(e.ops())
	e.sim.ResetCalls()
	e.once("membership_sync")
	if after := len(e.ops()); after != before {
		t.Fatalf("quiet pass made %d backend changes", after-before)
	}
	for op, n := range e.sim.Calls() {
		if op != "marketplace_provider_resources_list" && op != "marketplace_provider_resources_team_list" &&
			!strings.HasPrefix(op, "marketplace_provider_offerings_list_") && !isRegistration(op) {
			t.Errorf("quiet pass sent %s ×%d", op, n)
		}
	}
}

func TestRestrictMemberAccessRemovesEveryone(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	o := e.world.CreateOrder("locked", map[string]float64{"cpu": 1})
	e.once("order_process")
	res := resourceOf(t, e, o)
	e.sim.SetResourceFlags(res.UUID, false, false, true)
	e.once("membership_sync")
	if m := e.objects()[0].Members; len(m) != 0 {
		t.Fatalf("restricted resource keeps members %v", m)
	}
}

func resourceOf(t *testing.T, e *env, o waldursim.Order) waldursim.Resource {
	t.Helper()
	got, _ := e.sim.Order(o.UUID)
	res, ok := e.sim.Resource(got.ResourceUUID)
	if !ok || res.BackendID == "" {
		t.Fatalf("order %s has no created resource (state %s)", o.UUID, got.State)
	}
	return res
}

func isRegistration(op string) bool {
	switch op {
	case "marketplace_site_agent_identities_list", "marketplace_site_agent_identities_create",
		"marketplace_site_agent_identities_update", "marketplace_site_agent_identities_register_service",
		"marketplace_site_agent_services_register_processor":
		return true
	}
	return false
}
