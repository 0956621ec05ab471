package novainfra_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/backends/rke2/novainfra"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// Hermetic tests of what real Nova taught (real_test.go runs the same paths against it):
// Nova binds a pre-made port to its server only when the compute host builds it, and keeps a
// deleted server listed, task state "deleting", until the host has removed it.

func newSimInfra(t *testing.T, o openstacksim.Options) (*novainfra.Infra, *openstacksim.Server, rke2.ClusterRef) {
	t.Helper()
	sim := openstacksim.New(o)
	sim.AddNamedImage("cirros")
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return simInfraOn(t, sim, srv.URL, nil, nil), sim, rke2.ClusterRef{UUID: "0123456789abcdef0123456789abcdef", Name: "halo"}
}

// simInfraOn is a fresh Infra (as after a restart) on a running simulator; top and osKeys are
// added to backend_settings and its openstack block.
func simInfraOn(t *testing.T, sim *openstacksim.Server, url string, top, osKeys map[string]any, comps ...backends.Component) *novainfra.Infra {
	t.Helper()
	so := sim.Options()
	osBlock := map[string]any{"auth_url": openstacksim.AuthURL(url), "username": so.AdminUser, "password": so.AdminPassword,
		"project_name": so.AdminProject, "region_name": so.Region, "external_network_name": so.ExternalNetwork}
	for k, v := range osKeys {
		osBlock[k] = v
	}
	in := map[string]any{
		"backend_url": "https://rancher.invalid", "username": "token-test", "password": "unused",
		"base_image_name": "cirros", "managed_rancher_server_flavor_name": "m1.small",
		"vault_host": "vault.invalid", "vault_token": "unused", "openstack": osBlock,
	}
	for k, v := range top {
		in[k] = v
	}
	s, warnings, err := rke2.DecodeSettings(in)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("settings: %v %v", err, warnings)
	}
	inf, err := novainfra.New(&s, novainfra.Options{Logger: zaptest.NewLogger(t), RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond,
		Params: backends.Params{Components: comps}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inf.Close() })
	return inf
}

func simRequest(ref rke2.ClusterRef, fip bool) rke2.ServerRequest {
	name := rke2.NodeName(ref.Name, rke2.RoleServer, 0)
	return rke2.ServerRequest{Name: name, Image: "cirros", FloatingIP: fip,
		Inventory: rke2.Inventory{Cluster: ref.UUID, Role: rke2.RoleServer, Initial: true, Stage: rke2.StageInstall},
		Node:      rke2.NodeSpec{Flavor: "m1.small", SystemVolume: rke2.Volume{SizeGB: 64}}}
}

// The floating IP goes onto the pre-made port in the same call, while Nova is still building
// the server (its port not bound yet).
func TestCreateServerFloatingIPWhileBuilding(t *testing.T) {
	in, sim, ref := newSimInfra(t, openstacksim.Options{BuildDelay: time.Hour})
	ctx := context.Background()
	ni, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.CreateServer(ctx, ref, ni, simRequest(ref, true))
	if err != nil {
		t.Fatalf("CreateServer of a server in BUILD with a floating IP: %v", err)
	}
	if v.Status != "BUILD" {
		t.Fatalf("status %s, want BUILD", v.Status)
	}
	fips := sim.FloatingIPs("")
	servers := sim.Servers()
	if len(fips) != 1 || len(servers) != 1 || len(servers[0].Ports) != 1 || fips[0].PortID != servers[0].Ports[0] {
		t.Fatalf("floating IPs %+v, servers %+v: want one on the server's port", fips, servers)
	}
}

// A server being deleted is gone from Servers at once; TearDown waits (ErrNotReady) until
// Nova has removed it, then deletes the chain.
func TestTearDownWaitsForDeletingServers(t *testing.T) {
	in, sim, ref := newSimInfra(t, openstacksim.Options{DeleteDelay: 300 * time.Millisecond})
	ctx := context.Background()
	ni, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.CreateServer(ctx, ref, ni, simRequest(ref, true))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.DeleteServer(ctx, ref, v); err != nil {
		t.Fatal(err)
	}
	if got, err := in.Servers(ctx, ref); err != nil || len(got) != 0 {
		t.Fatalf("Servers right after DeleteServer: %+v, %v (want none: Nova is deleting it)", got, err)
	}
	if all := sim.Servers(); len(all) != 1 || !all[0].Deleting {
		t.Fatalf("the simulator should still list the server as deleting: %+v", all)
	}
	err = in.TearDown(ctx, ref)
	if !errors.Is(err, failure.ErrNotReady) || !failure.IsTransient(err) {
		t.Fatalf("TearDown while Nova deletes: %v, want ErrNotReady", err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := in.TearDown(ctx, ref); err != nil {
		t.Fatalf("TearDown once the server is gone: %v", err)
	}
	if n := len(sim.Servers()) + len(sim.FloatingIPs("")) + len(sim.Keypairs()); n != 0 {
		t.Fatalf("%d objects left", n)
	}
}

// A server deleted while Nova builds it (its port not bound yet) leaves no port behind.
func TestDeleteServerWhileBuilding(t *testing.T) {
	in, sim, ref := newSimInfra(t, openstacksim.Options{BuildDelay: time.Hour})
	ctx := context.Background()
	ni, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	before := sim.ObjectsOf(sim.AdminProjectID()).Ports
	v, err := in.CreateServer(ctx, ref, ni, simRequest(ref, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.DeleteServer(ctx, ref, v); err != nil {
		t.Fatal(err)
	}
	if after := sim.ObjectsOf(sim.AdminProjectID()).Ports; after != before || len(sim.Servers()) != 0 {
		t.Fatalf("ports %d before the server, %d after it was deleted; servers %+v", before, after, sim.Servers())
	}
}
