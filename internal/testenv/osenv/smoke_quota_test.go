package osenv_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	netquotas "github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
)

// Limits the smoke test sets; all differ from the services' defaults.
const (
	wantCores, wantRAM, wantInstances      = 7, 4096, 3
	wantVolumes, wantGigabytes, wantSnaps  = 4, 50, 6
	wantNetworks, wantSubnets, wantRouters = 3, 3, 2
	wantSecGroups, wantSecRules, wantFIPs  = 4, 30, 2
	wantPorts                              = 20
)

func (s *smoke) computeQuotas(t *testing.T) {
	s.cleanup("reset compute quotas", func(ctx context.Context) error {
		return computequotas.Delete(ctx, s.compute, s.projectID).Err
	})
	s.lat.do(t, "nova PUT /os-quota-sets/{p}", func() error {
		_, err := computequotas.Update(s.ctx, s.compute, s.projectID, computequotas.UpdateOpts{
			Cores: ptr(wantCores), RAM: ptr(wantRAM), Instances: ptr(wantInstances)}).Extract()
		return err
	})
	var q *computequotas.QuotaSet
	s.lat.do(t, "nova GET /os-quota-sets/{p}", func() (err error) {
		q, err = computequotas.Get(s.ctx, s.compute, s.projectID).Extract()
		return err
	})
	if diff := cmp.Diff([]int{wantCores, wantRAM, wantInstances}, []int{q.Cores, q.RAM, q.Instances}); diff != "" {
		t.Errorf("nova limits cores/ram/instances (-want +got):\n%s", diff)
	}
	var d computequotas.QuotaDetailSet
	s.lat.do(t, "nova GET /os-quota-sets/{p}/detail", func() (err error) {
		d, err = computequotas.GetDetail(s.ctx, s.compute, s.projectID).Extract()
		return err
	})
	want := []computequotas.QuotaDetail{{Limit: wantCores}, {Limit: wantRAM}, {Limit: wantInstances}}
	if diff := cmp.Diff(want, []computequotas.QuotaDetail{d.Cores, d.RAM, d.Instances}); diff != "" {
		t.Errorf("nova usage detail cores/ram/instances (-want +got):\n%s", diff)
	}
}

func (s *smoke) volumeQuotas(t *testing.T) {
	s.cleanup("reset volume quotas", func(ctx context.Context) error {
		return volumequotas.Delete(ctx, s.volume, s.projectID).ExtractErr()
	})
	s.lat.do(t, "cinder PUT /os-quota-sets/{p}", func() error {
		_, err := volumequotas.Update(s.ctx, s.volume, s.projectID, volumequotas.UpdateOpts{
			Volumes: ptr(wantVolumes), Gigabytes: ptr(wantGigabytes), Snapshots: ptr(wantSnaps)}).Extract()
		return err
	})
	var q *volumequotas.QuotaSet
	s.lat.do(t, "cinder GET /os-quota-sets/{p}", func() (err error) {
		q, err = volumequotas.Get(s.ctx, s.volume, s.projectID).Extract()
		return err
	})
	if diff := cmp.Diff([]int{wantVolumes, wantGigabytes, wantSnaps}, []int{q.Volumes, q.Gigabytes, q.Snapshots}); diff != "" {
		t.Errorf("cinder limits volumes/gigabytes/snapshots (-want +got):\n%s", diff)
	}
	t.Logf("cinder per-volume-type quota keys: %v", keys(q.Extra))
	var u volumequotas.QuotaUsageSet
	s.lat.do(t, "cinder GET /os-quota-sets/{p}?usage=true", func() (err error) {
		u, err = volumequotas.GetUsage(s.ctx, s.volume, s.projectID).Extract()
		return err
	})
	want := []volumequotas.QuotaUsage{{Limit: wantVolumes}, {Limit: wantGigabytes}, {Limit: wantSnaps}}
	if diff := cmp.Diff(want, []volumequotas.QuotaUsage{u.Volumes, u.Gigabytes, u.Snapshots}); diff != "" {
		t.Errorf("cinder usage volumes/gigabytes/snapshots (-want +got):\n%s", diff)
	}
}

func (s *smoke) networkQuotas(t *testing.T) {
	s.cleanup("reset network quotas", func(ctx context.Context) error {
		return netquotas.Delete(ctx, s.network, s.projectID).ExtractErr()
	})
	want := netquotas.Quota{Network: wantNetworks, Subnet: wantSubnets, Router: wantRouters,
		SecurityGroup: wantSecGroups, SecurityGroupRule: wantSecRules, FloatingIP: wantFIPs, Port: wantPorts}
	s.lat.do(t, "neutron PUT /v2.0/quotas/{p}", func() error {
		_, err := netquotas.Update(s.ctx, s.network, s.projectID, netquotas.UpdateOpts{
			Network: ptr(want.Network), Subnet: ptr(want.Subnet), Router: ptr(want.Router),
			SecurityGroup: ptr(want.SecurityGroup), SecurityGroupRule: ptr(want.SecurityGroupRule),
			FloatingIP: ptr(want.FloatingIP), Port: ptr(want.Port)}).Extract()
		return err
	})
	var q *netquotas.Quota
	s.lat.do(t, "neutron GET /v2.0/quotas/{p}", func() (err error) {
		q, err = netquotas.Get(s.ctx, s.network, s.projectID).Extract()
		return err
	})
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".RBACPolicy" || f == ".SubnetPool" || f == ".Trunk"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, *q, ignore); diff != "" {
		t.Errorf("neutron limits (-want +got):\n%s", diff)
	}
	d := s.networkDetail(t)
	if d.Network != (netquotas.QuotaDetail{Limit: wantNetworks}) || d.Router != (netquotas.QuotaDetail{Limit: wantRouters}) {
		t.Errorf("neutron detail before any resource: network %+v router %+v, want used 0 and the new limits", d.Network, d.Router)
	}
}

func (s *smoke) networkDetail(t *testing.T) *netquotas.QuotaDetailSet {
	t.Helper()
	var d *netquotas.QuotaDetailSet
	s.lat.do(t, "neutron GET /v2.0/quotas/{p}/details", func() (err error) {
		d, err = netquotas.GetDetail(s.ctx, s.network, s.projectID).Extract()
		return err
	})
	return d
}

// networkUsage checks that Neutron counts what createNetworking made.
func (s *smoke) networkUsage(t *testing.T) {
	d := s.networkDetail(t)
	t.Logf("neutron usage: network %+v subnet %+v router %+v floatingip %+v port %+v security_group %+v security_group_rule %+v",
		d.Network, d.Subnet, d.Router, d.FloatingIP, d.Port, d.SecurityGroup, d.SecurityGroupRule)
	exact := []struct {
		name      string
		got       netquotas.QuotaDetail
		used, lim int
	}{
		{"network", d.Network, 1, wantNetworks},
		{"subnet", d.Subnet, 1, wantSubnets},
		{"router", d.Router, 1, wantRouters},
		{"floatingip", d.FloatingIP, 1, wantFIPs},
	}
	for _, e := range exact {
		if e.got.Used != e.used || e.got.Limit != e.lim {
			t.Errorf("%s: used %d limit %d, want used %d limit %d", e.name, e.got.Used, e.got.Limit, e.used, e.lim)
		}
	}
	// The project's "default" group appears next to ours; the router
	// interface is a port of the project; each group has egress rules.
	if d.SecurityGroup.Used < 1 || d.Port.Used < 1 || d.SecurityGroupRule.Used < 2 {
		t.Errorf("want security_group >= 1, port >= 1, security_group_rule >= 2 used; got %d, %d, %d",
			d.SecurityGroup.Used, d.Port.Used, d.SecurityGroupRule.Used)
	}
}

func (s *smoke) teardownIdentity(t *testing.T) {
	s.lat.do(t, "neutron DELETE /v2.0/quotas/{p}", func() error {
		return netquotas.Delete(s.ctx, s.network, s.projectID).ExtractErr()
	})
	s.lat.do(t, "nova DELETE /os-quota-sets/{p}", func() error {
		return computequotas.Delete(s.ctx, s.compute, s.projectID).Err
	})
	s.lat.do(t, "cinder DELETE /os-quota-sets/{p}", func() error {
		return volumequotas.Delete(s.ctx, s.volume, s.projectID).ExtractErr()
	})
	q, err := computequotas.Get(s.ctx, s.compute, s.projectID).Extract()
	if err != nil {
		t.Fatalf("nova quotas after reset: %v", err)
	}
	if q.Cores == wantCores {
		t.Errorf("nova cores after reset = %d, want the default back", q.Cores)
	}
	s.deleteIdentity(t)
}

func ptr(v int) *int { return &v }

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
