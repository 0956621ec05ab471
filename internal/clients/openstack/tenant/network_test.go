package tenant_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// simNeutron is the admin's connection to a fresh OpenStack simulator, and a project of the
// test's own (the admin project holds the external network).
func simNeutron(t *testing.T) (*osc.Clients, *openstacksim.Server, string) {
	t.Helper()
	sim := openstacksim.New(openstacksim.Options{})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	o := sim.Options()
	conn := osc.Connection{AuthURL: openstacksim.AuthURL(srv.URL), Username: o.AdminUser, Password: secret.New(o.AdminPassword),
		ProjectName: o.AdminProject, RegionName: o.Region}
	conn.ApplyDefaults()
	hc := osc.NewHTTPClient(osc.HTTPOptions{Retries: 1, WaitMin: time.Millisecond, WaitMax: time.Millisecond})
	c, err := osc.Connect(context.Background(), hc, conn)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := tenant.EnsureProject(context.Background(), c.Identity, projects.CreateOpts{Name: "teardown", DomainID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return c, sim, p.ID
}

// chain makes a network chain named name in the project: network, subnet, router with its
// interface, security group and a floating IP described "<name> fip"; it returns the network.
func chain(t *testing.T, c *osc.Clients, p, name, cidr string) string {
	t.Helper()
	ctx, nc := context.Background(), c.Network
	net, err := osc.EnsureNetwork(ctx, nc, p, name)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := subnets.Create(ctx, nc, subnets.CreateOpts{NetworkID: net, Name: name, CIDR: cidr, IPVersion: gophercloud.IPv4, ProjectID: p}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := osc.FindExternalNetwork(ctx, nc, "public")
	if err != nil {
		t.Fatal(err)
	}
	r, err := osc.EnsureRouter(ctx, nc, p, name, ext)
	if err == nil {
		err = osc.EnsureInterface(ctx, nc, r, sn.ID)
	}
	if err == nil {
		_, err = groups.Create(ctx, nc, groups.CreateOpts{Name: name, ProjectID: p}).Extract()
	}
	if err == nil {
		_, err = floatingips.Create(ctx, nc, floatingips.CreateOpts{FloatingNetworkID: ext, Description: name + " fip", ProjectID: p}).Extract()
	}
	if err != nil {
		t.Fatal(err)
	}
	return net
}

func names(t *testing.T, c *osc.Clients, p string, kind tenant.NetKind) []string {
	t.Helper()
	found, err := tenant.ListNet(context.Background(), c.Network, kind, p, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range found {
		out = append(out, o.Name+"|"+o.Description)
	}
	return out
}

// A teardown by name takes one chain apart (its router's interface first, the floating IP
// picked by description) and leaves the other alone.
func TestNetworkTeardownOneChain(t *testing.T) {
	c, sim, p := simNeutron(t)
	chain(t, c, p, "alpha", "10.1.0.0/24")
	chain(t, c, p, "beta", "10.2.0.0/24")
	td := tenant.NetworkTeardown{ProjectID: p, Name: "alpha", Delete: func(o tenant.NetObject) bool {
		switch o.Kind {
		case tenant.FloatingIPs:
			return strings.HasPrefix(o.Description, "alpha ")
		case tenant.Subnets: // listed whatever their name
			return o.Name == "alpha"
		}
		return true
	}}
	if err := td.Run(context.Background(), c.Network); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []tenant.NetKind{tenant.Networks, tenant.Routers, tenant.SecurityGroups, tenant.FloatingIPs} {
		for _, n := range names(t, c, p, kind) {
			if strings.Contains(n, "alpha") {
				t.Errorf("%s %s outlived the teardown", kind, n)
			}
		}
	}
	o := sim.ObjectsOf(p)
	if o.Networks != 1 || o.Routers != 1 || o.Interfaces != 1 || o.FloatingIPs != 1 || o.Subnets != 1 {
		t.Errorf("the beta chain was touched: %+v", o)
	}
	// Again: nothing left to do, no error.
	if err := td.Run(context.Background(), c.Network); err != nil {
		t.Fatalf("repeated teardown: %v", err)
	}
}

// A port someone else put on the network blocks its deletion with a permanent error naming
// it; KeepGoing still deletes the security group after it, and a whole-project teardown with
// the port gone leaves nothing.
func TestNetworkTeardownNamesBlockingPorts(t *testing.T) {
	c, sim, p := simNeutron(t)
	net := chain(t, c, p, "gamma", "10.3.0.0/24")
	sim.AddPort(net, "web-vm", "3f6c0c1e-0000-4000-8000-000000000001", "compute:nova")
	keep := func(o tenant.NetObject) bool { return o.Kind != tenant.Ports } // the foreign port stays
	err := tenant.NetworkTeardown{ProjectID: p, Delete: keep, KeepGoing: true}.Run(context.Background(), c.Network)
	if err == nil || failure.IsTransient(err) || !strings.Contains(err.Error(), "network gamma is still used by port web-vm") {
		t.Fatalf("want a permanent error naming the port, got %v", err)
	}
	if o := sim.ObjectsOf(p); o.SecurityGroups != 0 || o.Routers != 0 || o.FloatingIPs != 0 || o.Networks != 1 {
		t.Errorf("KeepGoing: want all but the network gone, have %+v", o)
	}
	if err := (tenant.NetworkTeardown{ProjectID: p}).Run(context.Background(), c.Network); err != nil {
		t.Fatal(err)
	}
	if o := sim.ObjectsOf(p); o.Networks+o.Subnets+o.Ports+o.Routers+o.SecurityGroups+o.FloatingIPs != 0 {
		t.Errorf("whole-project teardown left %+v", o)
	}
}

// Kinds limits a teardown: only the security groups go.
func TestNetworkTeardownKinds(t *testing.T) {
	c, sim, p := simNeutron(t)
	chain(t, c, p, "delta", "10.4.0.0/24")
	td := tenant.NetworkTeardown{ProjectID: p, Kinds: []tenant.NetKind{tenant.SecurityGroups}}
	if err := td.Run(context.Background(), c.Network); err != nil {
		t.Fatal(err)
	}
	if o := sim.ObjectsOf(p); o.SecurityGroups != 0 || o.Networks != 1 || o.Routers != 1 || o.FloatingIPs != 1 {
		t.Errorf("want only the security groups gone, have %+v", o)
	}
}
