package osenv_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

// publicRange is the subnet of up.sh's external network.
var publicRange = netip.MustParsePrefix("203.0.113.0/24")

func (s *smoke) createNetworking(t *testing.T) {
	s.findExternalNetwork(t)
	s.lat.do(t, "neutron POST /v2.0/networks", func() error {
		n, err := networks.Create(s.ctx, s.network, networks.CreateOpts{Name: s.name, ProjectID: s.projectID}).Extract()
		if err == nil {
			s.netID = n.ID
		}
		return err
	})
	s.cleanup("delete network", func(ctx context.Context) error { return networks.Delete(ctx, s.network, s.netID).ExtractErr() })
	s.lat.do(t, "neutron POST /v2.0/subnets", func() error {
		sn, err := subnets.Create(s.ctx, s.network, subnets.CreateOpts{Name: s.name, NetworkID: s.netID,
			CIDR: "10.77.0.0/24", IPVersion: 4, ProjectID: s.projectID}).Extract()
		if err == nil {
			s.subnetID = sn.ID
		}
		return err
	})
	s.cleanup("delete subnet", func(ctx context.Context) error { return subnets.Delete(ctx, s.network, s.subnetID).ExtractErr() })
	s.createRouter(t)
	s.createFloatingIP(t)
	s.lat.do(t, "neutron POST /v2.0/security-groups", func() error {
		g, err := groups.Create(s.ctx, s.network, groups.CreateOpts{Name: s.name, ProjectID: s.projectID}).Extract()
		if err == nil {
			s.sgID = g.ID
		}
		return err
	})
	s.cleanup("delete security group", func(ctx context.Context) error { return groups.Delete(ctx, s.network, s.sgID).ExtractErr() })
	s.lat.do(t, "neutron POST /v2.0/security-group-rules", func() error {
		r, err := rules.Create(s.ctx, s.network, rules.CreateOpts{Direction: rules.DirIngress, EtherType: rules.EtherType4,
			Protocol: rules.ProtocolTCP, PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0",
			SecGroupID: s.sgID, ProjectID: s.projectID}).Extract()
		if err == nil {
			s.ruleID = r.ID
		}
		return err
	})
	s.cleanup("delete security group rule", func(ctx context.Context) error { return rules.Delete(ctx, s.network, s.ruleID).ExtractErr() })
}

func (s *smoke) findExternalNetwork(t *testing.T) {
	var found []struct {
		networks.Network
		external.NetworkExternalExt
	}
	s.lat.do(t, "neutron GET /v2.0/networks?name="+s.env.ExternalNetwork, func() error {
		page, err := networks.List(s.network, networks.ListOpts{Name: s.env.ExternalNetwork}).AllPages(s.ctx)
		if err != nil {
			return err
		}
		return networks.ExtractNetworksInto(page, &found)
	})
	if len(found) != 1 || !found[0].External {
		t.Fatalf("want one router:external network %q, got %+v", s.env.ExternalNetwork, found)
	}
	s.extNetID = found[0].ID
}

func (s *smoke) createRouter(t *testing.T) {
	var r *routers.Router
	s.lat.do(t, "neutron POST /v2.0/routers (gateway on external network)", func() (err error) {
		r, err = routers.Create(s.ctx, s.network, routers.CreateOpts{Name: s.name, ProjectID: s.projectID,
			GatewayInfo: &routers.GatewayInfo{NetworkID: s.extNetID}}).Extract()
		return err
	})
	s.routerID = r.ID
	s.cleanup("delete router", func(ctx context.Context) error { return routers.Delete(ctx, s.network, s.routerID).ExtractErr() })
	if ips := r.GatewayInfo.ExternalFixedIPs; len(ips) != 1 || !publicRange.Contains(netip.MustParseAddr(ips[0].IPAddress)) {
		t.Errorf("router gateway IPs = %+v, want one address in %s", ips, publicRange)
	}
	var info *routers.InterfaceInfo
	s.lat.do(t, "neutron PUT /v2.0/routers/{r}/add_router_interface", func() (err error) {
		info, err = routers.AddInterface(s.ctx, s.network, s.routerID, routers.AddInterfaceOpts{SubnetID: s.subnetID}).Extract()
		return err
	})
	s.cleanup("remove router interface", func(ctx context.Context) error {
		_, err := routers.RemoveInterface(ctx, s.network, s.routerID, routers.RemoveInterfaceOpts{SubnetID: s.subnetID}).Extract()
		return err
	})
	if info.SubnetID != s.subnetID || info.PortID == "" {
		t.Errorf("router interface = %+v, want a port on subnet %s", info, s.subnetID)
	}
}

func (s *smoke) createFloatingIP(t *testing.T) {
	var fip *floatingips.FloatingIP
	s.lat.do(t, "neutron POST /v2.0/floatingips", func() (err error) {
		fip, err = floatingips.Create(s.ctx, s.network, floatingips.CreateOpts{
			FloatingNetworkID: s.extNetID, ProjectID: s.projectID}).Extract()
		return err
	})
	s.fipID = fip.ID
	s.cleanup("delete floating IP", func(ctx context.Context) error {
		return floatingips.Delete(ctx, s.network, s.fipID).ExtractErr()
	})
	if addr, err := netip.ParseAddr(fip.FloatingIP); err != nil || !publicRange.Contains(addr) {
		t.Errorf("floating IP %q, want an address in %s", fip.FloatingIP, publicRange)
	}
}

// teardownNetworking deletes in dependency order, then the project's
// "default" security group that Neutron created on first use.
func (s *smoke) teardownNetworking(t *testing.T) {
	steps := []struct {
		name string
		fn   func() error
	}{
		{"neutron DELETE /v2.0/floatingips/{id}", func() error { return floatingips.Delete(s.ctx, s.network, s.fipID).ExtractErr() }},
		{"neutron DELETE /v2.0/security-group-rules/{id}", func() error { return rules.Delete(s.ctx, s.network, s.ruleID).ExtractErr() }},
		{"neutron DELETE /v2.0/security-groups/{id}", func() error { return groups.Delete(s.ctx, s.network, s.sgID).ExtractErr() }},
		{"neutron PUT /v2.0/routers/{r}/remove_router_interface", func() error {
			_, err := routers.RemoveInterface(s.ctx, s.network, s.routerID, routers.RemoveInterfaceOpts{SubnetID: s.subnetID}).Extract()
			return err
		}},
		{"neutron DELETE /v2.0/routers/{id}", func() error { return routers.Delete(s.ctx, s.network, s.routerID).ExtractErr() }},
		{"neutron DELETE /v2.0/subnets/{id}", func() error { return subnets.Delete(s.ctx, s.network, s.subnetID).ExtractErr() }},
		{"neutron DELETE /v2.0/networks/{id}", func() error { return networks.Delete(s.ctx, s.network, s.netID).ExtractErr() }},
		{"neutron DELETE default security groups", s.deleteDefaultGroups},
	}
	for _, st := range steps {
		s.lat.do(t, st.name, st.fn)
	}
	d := s.networkDetail(t)
	if d.Network.Used+d.Subnet.Used+d.Router.Used+d.SecurityGroup.Used+d.Port.Used+d.FloatingIP.Used != 0 {
		t.Errorf("neutron usage after teardown: %+v, want all zero", d)
	}
}

func (s *smoke) deleteDefaultGroups() error {
	page, err := groups.List(s.network, groups.ListOpts{ProjectID: s.projectID}).AllPages(s.ctx)
	if err != nil {
		return err
	}
	all, err := groups.ExtractGroups(page)
	if err != nil {
		return err
	}
	for _, g := range all {
		if err := groups.Delete(s.ctx, s.network, g.ID).ExtractErr(); err != nil {
			return err
		}
	}
	return nil
}

func (s *smoke) deleteIdentity(t *testing.T) {
	s.lat.do(t, "keystone DELETE /v3/projects/{p}/users/{u}/roles/{r}", func() error {
		return roles.Unassign(s.ctx, s.identity, s.memberRole, roles.UnassignOpts{UserID: s.userID, ProjectID: s.projectID}).ExtractErr()
	})
	s.lat.do(t, "keystone DELETE /v3/users/{id}", func() error { return users.Delete(s.ctx, s.identity, s.userID).ExtractErr() })
	s.lat.do(t, "keystone DELETE /v3/projects/{id}", func() error {
		return projects.Delete(s.ctx, s.identity, s.projectID).ExtractErr()
	})
	if _, err := projects.Get(s.ctx, s.identity, s.projectID).Extract(); err == nil {
		t.Errorf("project %s still exists after delete", s.projectID)
	}
}
