package openstack_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

func TestConformanceSim(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	backendtest.Run(t, backendtest.Options{
		New:      func(t *testing.T) backends.Backend { return env.backend(t, backendOpts{}) },
		Resource: resource,
		Members:  []string{"alice", "bob"},
	})
	if n := env.sim.LeftoverNeutron(); n != 0 {
		t.Errorf("%d Neutron objects outlived their projects", n)
	}
	if n := env.sim.ProjectCount(); n != 1 {
		t.Errorf("%d projects left, want only the admin project", n)
	}
}

func TestCreateBuildsTheTenant(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{settings: map[string]any{
		"allocation_pool": map[string]any{"start": "192.168.42.10", "end": "192.168.42.200"},
		"dns_nameservers": []any{"192.0.2.53"}}})
	res := resource(1)
	info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "physics-dm"})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := env.sim.ProjectByName("wd-physics-dm")
	if !ok || p.ID != info.BackendID {
		t.Fatalf("project wd-physics-dm: %+v (found %v), backend id %s", p, ok, info.BackendID)
	}
	if !slices.Contains(p.Tags, "waldur-resource="+res.UUID) || !strings.Contains(p.Description, "Dark Matter") {
		t.Errorf("project not marked for the resource: tags %v, description %q", p.Tags, p.Description)
	}
	checkQuotas(t, env.sim, p.ID, map[string]map[string]int{
		"nova": {"cores": 4, "ram": 8192}, "cinder": {"gigabytes": 50}, "neutron": {"floatingip": 2, "network": 3}})
	got := env.sim.ObjectsOf(p.ID)
	want := openstacksim.Objects{Networks: 1, Subnets: 1, Routers: 1, Interfaces: 1, Ports: 1, SecurityGroups: 5,
		Rules: 4 + 4*2 + 5, GroupNames: []string{"default", "ping", "rdp", "ssh", "web"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tenant objects (-want +got):\n%s", diff)
	}
	if info.Limits != nil {
		t.Errorf("create reported limits %v: Waldur's limits are the order's, never rewritten", info.Limits)
	}
	wantQuotas := map[string]any{"cores": 4, "ram": 8192, "gigabytes": 50, "floatingip": 2, "network": 3}
	if diff := cmp.Diff(wantQuotas, info.Metadata["quotas"]); diff != "" {
		t.Errorf("quotas in the backend metadata (-want +got):\n%s", diff)
	}
	for _, k := range []string{"auth_url", "project_id", "project_name", "network_id", "subnet_id", "router_id", "external_network"} {
		if s, _ := info.Metadata[k].(string); s == "" {
			t.Errorf("metadata %s missing: %v", k, info.Metadata)
		}
	}
	md, err := b.Metadata(ctxT(t), backends.Resource{UUID: res.UUID, BackendID: info.BackendID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info.Metadata, md); diff != "" {
		t.Errorf("metadata read later differs from create's (-create +later):\n%s", diff)
	}
}

func checkQuotas(t *testing.T, sim *openstacksim.Server, projectID string, want map[string]map[string]int) {
	t.Helper()
	for svc, keys := range want {
		got := sim.Quotas(svc, projectID)
		for k, v := range keys {
			if got[k] != v {
				t.Errorf("%s quota %s = %d, want %d", svc, k, got[k], v)
			}
		}
	}
}

func TestSecondCreateOnlyReadsAndReappliesQuotas(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "again")
	env.sim.ResetCalls()
	again := create(t, b, res, "again")
	if again.BackendID != res.BackendID {
		t.Fatalf("second create returned %s, first %s", again.BackendID, res.BackendID)
	}
	for op, n := range env.sim.Calls() {
		if strings.Contains(op, " POST ") || strings.Contains(op, " DELETE ") {
			t.Errorf("second create called %s %d time(s)", op, n)
		}
	}
}

func TestAnotherResourcesProjectIsADuplicate(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	create(t, b, resource(1), "shared-name")
	_, err := b.Create(ctxT(t), backends.CreateRequest{Resource: resource(2), Name: "shared-name"})
	if !errors.Is(err, failure.ErrDuplicate) {
		t.Fatalf("want ErrDuplicate, got %v", err)
	}
}

func TestUpdateBelowUsageIsRefusedAndChangesNothing(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "busy")
	env.sim.AddServer(res.BackendID, 3, 2048)
	env.sim.AddVolume(res.BackendID, 40)
	env.sim.ResetCalls()
	err := b.SetLimits(ctxT(t), res, backends.Quantities{"cores": 2, "ram": 8192, "storage": 30, "floating_ip": 2, "net": 3})
	msg, public := failure.PublicMessage(err)
	if err == nil || !public || failure.IsTransient(err) || !strings.Contains(msg, "cores") || !strings.Contains(msg, "storage") {
		t.Fatalf("want a user-facing refusal naming cores and storage, got %v", err)
	}
	for op := range env.sim.Calls() {
		if strings.Contains(op, " PUT ") {
			t.Errorf("refused update still called %s", op)
		}
	}
	checkQuotas(t, env.sim, res.BackendID, map[string]map[string]int{"nova": {"cores": 4}, "cinder": {"gigabytes": 50}})
	if err := b.SetLimits(ctxT(t), res, backends.Quantities{"cores": 3, "ram": 4096, "storage": 40}); err != nil {
		t.Fatalf("limits equal to usage must pass: %v", err)
	}
	checkQuotas(t, env.sim, res.BackendID, map[string]map[string]int{"nova": {"cores": 3, "ram": 4096}, "cinder": {"gigabytes": 40},
		"neutron": {"network": 3}})
}

func TestTerminateRefusesWorkloadsUnlessForceDestroy(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "loaded")
	env.sim.AddServer(res.BackendID, 2, 1024)
	env.sim.AddVolume(res.BackendID, 10)
	env.sim.AddFloatingIP(res.BackendID)
	err := b.Delete(ctxT(t), res)
	if msg, ok := failure.PublicMessage(err); !ok || !strings.Contains(msg, "1 server(s) and 1 volume(s)") || !strings.Contains(msg, "force_destroy") {
		t.Fatalf("want a refusal naming servers, volumes and force_destroy, got %v", err)
	}
	if _, ok := env.sim.ProjectByName("wd-loaded"); !ok {
		t.Fatal("refused delete removed the project")
	}
	forced := env.backend(t, backendOpts{settings: map[string]any{"force_destroy": true}})
	if err := forced.Delete(ctxT(t), res); err != nil {
		t.Fatalf("force_destroy delete: %v", err)
	}
	if _, ok := env.sim.ProjectByName("wd-loaded"); ok {
		t.Fatal("project still exists")
	}
	if got := env.sim.ObjectsOf(res.BackendID); !cmp.Equal(got, openstacksim.Objects{}) {
		t.Errorf("objects left behind: %+v", got)
	}
	for _, svc := range []string{"nova", "cinder", "neutron"} {
		if env.sim.HasQuotaOverrides(svc, res.BackendID) {
			t.Errorf("%s quota overrides left behind", svc)
		}
	}
}

func TestDeleteRefusesAProjectOfAnotherResource(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "mine")
	other := res
	other.UUID = resource(2).UUID
	if _, ok := failure.PublicMessage(b.Delete(ctxT(t), other)); !ok {
		t.Fatal("delete with another resource's uuid must be refused with a message")
	}
	if _, ok := env.sim.ProjectByName("wd-mine"); !ok {
		t.Fatal("the project was deleted")
	}
}

func TestLimitsWithoutRoomForTheTenantsNetworkAreExplained(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := resource(1)
	res.Limits["net"] = 0
	_, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "cramped"})
	msg, public := failure.PublicMessage(err)
	if !public || failure.IsTransient(err) || !strings.Contains(msg, "create network") {
		t.Fatalf("want a user-facing explanation of the over-quota network, got %v", err)
	}
}

// A vanished project cannot come back under its old id: Create says so instead of making an
// orphan tenant the resource would never point at.
func TestVanishedTenantIsRecreatedUnderANewID(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "gone")
	if err := b.Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if info.BackendID == "" || info.BackendID == res.BackendID {
		t.Fatalf("re-created tenant id %q (old %q): Keystone assigns a new one", info.BackendID, res.BackendID)
	}
	if n := env.sim.ProjectCount(); n != 2 {
		t.Fatalf("%d projects, want the admin project and the re-created tenant", n)
	}
	if _, err := b.Lookup(ctxT(t), backends.Resource{}); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("lookup without an id: want ErrNotFound, got %v", err)
	}
}
