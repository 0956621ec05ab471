package novainfra_test

import (
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/backends/rke2/novainfra"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// tenant: per_cluster on real Keystone, Nova, Neutron and Cinder: the cluster's project is
// made once with the tenant maxima as quotas, the node (server, both volumes, port, floating IP)
// is in it, a restarted Infra finds the same project, and TearDown leaves no project.
func TestRealNovaPerClusterProject(t *testing.T) {
	w := newRealWorldWith(t, map[string]any{"managed_rancher_tenant_max_cpu": 8, "managed_rancher_tenant_max_ram": 16,
		"managed_rancher_tenant_max_disk": 200}, map[string]any{"tenant": "per_cluster"})
	provider, err := gos.AuthenticatedClient(w.ctx, w.env.AuthOptions())
	must(t, err)
	identity, err := gos.NewIdentityV3(provider, w.env.EndpointOpts())
	must(t, err)
	name := "rke2-" + w.ref.UUID
	t.Cleanup(func() { // whatever happened: no project of this run stays
		if p := findProjects(t, w, identity, name); len(p) > 0 {
			_ = projects.Delete(w.ctx, identity, p[0].ID).ExtractErr()
		}
	})
	start := time.Now()
	ni, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	must(t, err)
	n, calls := w.calls.take()
	t.Logf("EnsureNetwork with a new project: %s, %d requests (%s)", time.Since(start).Round(time.Millisecond), n, calls)
	found := findProjects(t, w, identity, name)
	if len(found) != 1 || found[0].ID != ni.ProjectID {
		t.Fatalf("projects named %s: %+v, want one, the network's (%s)", name, found, ni.ProjectID)
	}
	pid := ni.ProjectID
	q, err := tenant.GetQuotas(w.ctx, tenant.Services{Compute: w.Compute}, tenant.Nova, pid)
	must(t, err)
	if q["cores"] != 8 || q["ram"] != 16*1024 {
		t.Fatalf("nova quotas of the cluster's project: cores %d, ram %d", q["cores"], q["ram"])
	}

	nodeName := rke2.NodeName(w.ref.Name, rke2.RoleServer, 0)
	inv := rke2.Inventory{Cluster: w.ref.UUID, Role: rke2.RoleServer, Initial: true, Stage: rke2.StageInstall}
	req := rke2.ServerRequest{Name: nodeName, Inventory: inv, Image: w.env.Image, UserData: w.userData(nodeName, inv), FloatingIP: true,
		Node: rke2.NodeSpec{Flavor: "m1.small", SystemVolume: rke2.Volume{SizeGB: 64},
			DataVolumes: []rke2.DataVolume{{Volume: rke2.Volume{SizeGB: 20}, MountPoint: "/opt/rke2_storage"}}}}
	start = time.Now()
	made, err := w.infra.CreateServer(w.ctx, w.ref, ni, req)
	must(t, err)
	w.waitActive(made.ID, start)
	n, calls = w.calls.take()
	t.Logf("CreateServer to ACTIVE in the cluster's project: %s, %d requests (%s)", time.Since(start).Round(time.Millisecond), n, calls)
	var s struct {
		TenantID string `json:"tenant_id"`
	}
	must(t, servers.Get(w.ctx, w.Compute, made.ID).ExtractInto(&s))
	if s.TenantID != pid {
		t.Fatalf("server in project %s, want the cluster's %s", s.TenantID, pid)
	}
	page, err := volumes.List(w.Volume, volumes.ListOpts{AllTenants: true, TenantID: pid}).AllPages(w.ctx)
	must(t, err)
	vols, err := volumes.ExtractVolumes(page)
	must(t, err)
	if len(vols) != 2 {
		t.Fatalf("%d volumes in the cluster's project, want system + data", len(vols))
	}
	if p := w.ports(ports.ListOpts{ProjectID: pid, Name: nodeName}); len(p) != 1 {
		t.Fatalf("node ports in the cluster's project: %+v", p)
	}
	if f := w.fips(floatingips.ListOpts{ProjectID: pid}); len(f) != 1 {
		t.Fatalf("floating IPs in the cluster's project: %d, want 1", len(f))
	}

	// A restarted agent: the same project, the same server.
	again, err := novainfra.New(&w.settings, novainfra.Options{Transport: w.calls, Logger: zaptest.NewLogger(t),
		RetryWaitMin: 100 * time.Millisecond, RetryWaitMax: time.Second})
	must(t, err)
	t.Cleanup(func() { _ = again.Close() })
	ni2, err := again.EnsureNetwork(w.ctx, w.ref)
	must(t, err)
	if ni2.ProjectID != pid || len(findProjects(t, w, identity, name)) != 1 {
		t.Fatalf("second EnsureNetwork: project %s (first %s)", ni2.ProjectID, pid)
	}
	n, calls = w.calls.take()
	t.Logf("EnsureNetwork of a restarted agent (project found, role and quotas set again): %d requests (%s)", n, calls)
	must(t, w.infra.ClearLeftovers(w.ctx, w.ref))
	must(t, w.infra.DeleteServer(w.ctx, w.ref, made))
	start = time.Now()
	w.tearDown()
	n, calls = w.calls.take()
	t.Logf("terminate (DeleteServer, TearDown with the project): %s, %d requests (%s)", time.Since(start).Round(time.Millisecond), n, calls)
	if _, err := projects.Get(w.ctx, identity, pid).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("the cluster's project after TearDown: %v, want 404", err)
	}
}

func findProjects(t *testing.T, w *realWorld, identity *gophercloud.ServiceClient, name string) []projects.Project {
	page, err := projects.List(identity, projects.ListOpts{Name: name}).AllPages(w.ctx)
	must(t, err)
	all, err := projects.ExtractProjects(page)
	must(t, err)
	return all
}
