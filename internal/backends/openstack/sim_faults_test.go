package openstack_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// fullTenant is what a finished tenant holds in the simulator with the default settings.
var fullTenant = openstacksim.Objects{Networks: 1, Subnets: 1, Routers: 1, Interfaces: 1, Ports: 1, SecurityGroups: 5,
	Rules: 17, GroupNames: []string{"default", "ping", "rdp", "ssh", "web"}}

// createUntilDone repeats Create as the order cycle would, requiring transient errors only.
func createUntilDone(t *testing.T, b *openstack.Backend, res backends.Resource, name string, passes int) (backends.Resource, int) {
	t.Helper()
	for i := 1; i <= passes; i++ {
		info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: name})
		if err == nil {
			res.BackendID = info.BackendID
			return res, i
		}
		t.Logf("pass %d: %v", i, err)
		if !failure.IsTransient(err) {
			t.Fatalf("pass %d: a fault must give a transient error, got %v", i, err)
		}
	}
	t.Fatalf("tenant not finished after %d passes", passes)
	return res, 0
}

func checkTenant(t *testing.T, env simEnv, projectName string, want openstacksim.Objects) string {
	t.Helper()
	p, ok := env.sim.ProjectByName(projectName)
	if !ok {
		t.Fatalf("project %s missing", projectName)
	}
	if diff := cmp.Diff(want, env.sim.ObjectsOf(p.ID)); diff != "" {
		t.Errorf("tenant objects (-want +got):\n%s", diff)
	}
	if n := env.sim.ProjectCount(); n != 2 {
		t.Errorf("%d projects, want the admin project and one tenant", n)
	}
	return p.ID
}

// A response lost after the service applied the request (a crash or restart mid-create): the
// pass fails, the next one finishes the tenant and nothing is duplicated.
func TestLostResponsesMidCreate(t *testing.T) {
	ops := []string{
		"keystone POST /v3/projects",
		"nova PUT /os-quota-sets/{project}",
		"neutron POST /v2.0/security-groups",
		"neutron POST /v2.0/security-group-rules",
		"neutron POST /v2.0/networks",
		"neutron POST /v2.0/subnets",
		"neutron POST /v2.0/routers",
		"neutron PUT /v2.0/routers/{id}/add_router_interface",
		"keystone POST /v3/users",
		"keystone PUT /v3/projects/{project}/users/{user}/roles/{role}",
	}
	for _, op := range ops {
		t.Run(op, func(t *testing.T) {
			env := startSim(t, openstacksim.Options{})
			store := newMemSecrets()
			b := env.backend(t, backendOpts{secrets: store, settings: map[string]any{"create_tenant_user": true, "credentials_path": "kv/os"}})
			env.sim.FailNext(op, 1, openstacksim.FaultLoseResponse)
			res, passes := createUntilDone(t, b, resource(1), "lost", 3)
			if log := env.sim.FaultLog(); len(log) != 1 {
				t.Fatalf("fault not injected: %v", log)
			}
			t.Logf("finished after %d pass(es)", passes)
			checkTenant(t, env, "wd-lost", fullTenant)
			if members := env.sim.Members(res.BackendID); !cmp.Equal(members, []string{"wd-lost"}) {
				t.Errorf("role holders = %v, want the tenant user once", members)
			}
			creds, err := store.Get(ctxT(t), "kv/os/wd-lost")
			if err != nil {
				t.Fatal(err)
			}
			loginAs(t, env, creds)
		})
	}
}

// Random 5xx and 429 answers on 30% of requests are absorbed by retries (or the next pass).
func TestRandomFaultsDuringCreateAndDelete(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	env.sim.SetFaults(openstacksim.Faults{Rate: 0.3, Seed: 42})
	res, passes := createUntilDone(t, b, resource(1), "flaky", 5)
	t.Logf("create finished after %d pass(es); faults injected: %d", passes, len(env.sim.FaultLog()))
	if len(env.sim.FaultLog()) == 0 {
		t.Fatal("no faults injected")
	}
	env.sim.SetFaults(openstacksim.Faults{})
	checkTenant(t, env, "wd-flaky", fullTenant)
	env.sim.SetFaults(openstacksim.Faults{Rate: 0.3, Seed: 7})
	var err error
	for i := 0; i < 5; i++ {
		if err = b.Delete(ctxT(t), res); err == nil {
			break
		}
		if !failure.IsTransient(err) {
			t.Fatalf("delete under faults: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("delete did not finish: %v", err)
	}
	env.sim.SetFaults(openstacksim.Faults{})
	if n := env.sim.ProjectCount() + env.sim.LeftoverNeutron(); n != 1 {
		t.Fatalf("after delete: %d projects + leftover Neutron objects, want 1 (admin)", n)
	}
}

// Neutron down for a whole pass: the pass fails as transient; the next finishes.
func TestNeutronDownDuringCreate(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	if _, err := b.Create(ctxT(t), backends.CreateRequest{Resource: resource(1), Name: "outage"}); err != nil {
		t.Fatal(err) // connects and resolves names while Neutron is up
	}
	if err := b.Delete(ctxT(t), backends.Resource{UUID: resource(1).UUID, BackendID: mustProject(t, env, "wd-outage")}); err != nil {
		t.Fatal(err)
	}
	env.sim.SetDown("neutron", true)
	_, err := b.Create(ctxT(t), backends.CreateRequest{Resource: resource(1), Name: "outage"})
	if !failure.IsTransient(err) {
		t.Fatalf("want a transient error while Neutron is down, got %v", err)
	}
	env.sim.SetDown("neutron", false)
	createUntilDone(t, b, resource(1), "outage", 1)
	checkTenant(t, env, "wd-outage", fullTenant)
}

func mustProject(t *testing.T, env simEnv, name string) string {
	t.Helper()
	p, ok := env.sim.ProjectByName(name)
	if !ok {
		t.Fatalf("project %s missing", name)
	}
	return p.ID
}

func TestExpiredTokenIsRenewed(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "token")
	env.sim.ExpireTokens()
	if err := b.SetLimits(ctxT(t), res, backends.Quantities{"cores": 6}); err != nil {
		t.Fatalf("set limits after token expiry: %v", err)
	}
	if err := b.Ping(ctxT(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "classes")
	env.sim.FailNext("nova PUT /os-quota-sets/{project}", 5, openstacksim.Fault503)
	err := b.SetLimits(ctxT(t), res, backends.Quantities{"cores": 6})
	if !failure.IsTransient(err) || !failure.HasStatus(err, 503) {
		t.Fatalf("persistent 503 after retries: want transient with status, got %v", err)
	}
	if _, public := failure.PublicMessage(err); public {
		t.Errorf("a 503 is not a user-facing error: %v", err)
	}
	missing := res
	missing.BackendID = "0123456789abcdef0123456789abcdef"
	if err := b.SetLimits(ctxT(t), missing, backends.Quantities{"cores": 6}); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("set limits of a missing tenant: want ErrNotFound, got %v", err)
	}
}
