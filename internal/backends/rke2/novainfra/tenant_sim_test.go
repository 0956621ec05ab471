package novainfra_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// tenant: per_cluster against the simulator: the project is made once, quotas and the role set,
// every object of the cluster is in it, a restarted agent finds it again, and terminate
// leaves no project.

type perClusterWorld struct {
	sim *openstacksim.Server
	url string
	ref rke2.ClusterRef
}

func newPerClusterWorld(t *testing.T) *perClusterWorld {
	sim := openstacksim.New(openstacksim.Options{})
	sim.AddNamedImage("cirros")
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &perClusterWorld{sim: sim, url: srv.URL, ref: rke2.ClusterRef{UUID: "fedcba9876543210fedcba9876543210", Name: "solo"}}
}

var tenantMaxima = map[string]any{"managed_rancher_tenant_max_cpu": 16, "managed_rancher_tenant_max_ram": 32, "managed_rancher_tenant_max_disk": 500}

func (w *perClusterWorld) infra(t *testing.T) interface {
	EnsureNetwork(context.Context, rke2.ClusterRef) (rke2.NetworkInfo, error)
	CreateServer(context.Context, rke2.ClusterRef, rke2.NetworkInfo, rke2.ServerRequest) (rke2.ServerView, error)
	Servers(context.Context, rke2.ClusterRef) ([]rke2.ServerView, error)
	DeleteServer(context.Context, rke2.ClusterRef, rke2.ServerView) error
	TearDown(context.Context, rke2.ClusterRef) error
} {
	return simInfraOn(t, w.sim, w.url, tenantMaxima, map[string]any{"tenant": "per_cluster"})
}

func (w *perClusterWorld) project(t *testing.T) openstacksim.Project {
	t.Helper()
	p, ok := w.sim.ProjectByName("rke2-" + w.ref.UUID)
	if !ok {
		t.Fatal("no project rke2-<uuid>")
	}
	return p
}

// create runs EnsureNetwork and CreateServer (with a floating IP) as one Create pass does.
func (w *perClusterWorld) create(t *testing.T, in interface {
	EnsureNetwork(context.Context, rke2.ClusterRef) (rke2.NetworkInfo, error)
	CreateServer(context.Context, rke2.ClusterRef, rke2.NetworkInfo, rke2.ServerRequest) (rke2.ServerView, error)
}) rke2.ServerView {
	t.Helper()
	ctx := context.Background()
	ni, err := in.EnsureNetwork(ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	req := simRequest(w.ref, true)
	req.Node.DataVolumes = []rke2.DataVolume{{Volume: rke2.Volume{SizeGB: 20}, MountPoint: "/opt/rke2_storage"}}
	v, err := in.CreateServer(ctx, w.ref, ni, req)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPerClusterProjectLifecycle(t *testing.T) {
	w := newPerClusterWorld(t)
	ctx := context.Background()
	admin := w.sim.AdminProjectID()
	before := w.sim.ObjectsOf(admin)
	v := w.create(t, w.infra(t))
	p := w.project(t)
	if n := w.sim.ProjectCount(); n != 2 {
		t.Fatalf("%d projects, want the admin project and the cluster's", n)
	}
	if !slices.Contains(p.Tags, "rke2-cluster="+w.ref.UUID) {
		t.Fatalf("project tags %v", p.Tags)
	}
	if q := w.sim.Quotas("nova", p.ID); q["cores"] != 16 || q["ram"] != 32*1024 {
		t.Fatalf("nova quotas %v, want the tenant maxima 16 cores, 32768 MB", q)
	}
	if q := w.sim.Quotas("cinder", p.ID); q["gigabytes"] != 500 {
		t.Fatalf("cinder quotas %v, want 500 GB", q)
	}
	if m := w.sim.Members(p.ID); len(m) == 0 {
		t.Fatal("the admin user has no role on the cluster's project")
	}
	srv := w.sim.Servers()
	if len(srv) != 1 || srv[0].ID != v.ID || srv[0].ProjectID != p.ID {
		t.Fatalf("servers %+v, want one in project %s", srv, p.ID)
	}
	vols := w.sim.Volumes("")
	if len(vols) != 2 {
		t.Fatalf("volumes %+v, want system + data", vols)
	}
	for _, vol := range vols {
		if vol.ProjectID != p.ID {
			t.Fatalf("volume %s in project %s, not the cluster's %s", vol.ID, vol.ProjectID, p.ID)
		}
	}
	if fips := w.sim.FloatingIPs(p.ID); len(fips) != 1 {
		t.Fatalf("floating IPs in the cluster's project: %+v", fips)
	}
	in := w.sim.ObjectsOf(p.ID)
	if in.Networks != 1 || in.Subnets != 1 || in.Routers != 1 || in.Ports < 1 || in.Servers != 1 || in.Volumes != 2 || in.FloatingIPs != 1 {
		t.Fatalf("objects in the cluster's project: %+v", in)
	}
	if after := w.sim.ObjectsOf(admin); after.Networks != before.Networks || after.Ports != before.Ports ||
		after.Servers != 0 || after.Volumes != 0 || after.FloatingIPs != before.FloatingIPs || after.SecurityGroups != before.SecurityGroups {
		t.Fatalf("the shared project changed: %+v, before %+v", after, before)
	}

	// A restarted agent (no cache) repeats the Create pass: same project, same server.
	again := w.infra(t)
	v2 := w.create(t, again)
	if n := w.sim.ProjectCount(); n != 2 || v2.ID != v.ID || len(w.sim.Servers()) != 1 {
		t.Fatalf("after a second Create: %d projects, server %s (first %s), %d servers", n, v2.ID, v.ID, len(w.sim.Servers()))
	}

	// Terminate: the server, the chain and the project.
	if err := again.DeleteServer(ctx, w.ref, v2); err != nil {
		t.Fatal(err)
	}
	if err := again.TearDown(ctx, w.ref); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.sim.ProjectByName("rke2-" + w.ref.UUID); ok || w.sim.ProjectCount() != 1 {
		t.Fatalf("the cluster's project is still there (%d projects)", w.sim.ProjectCount())
	}
	if left := w.sim.ObjectsOf(p.ID); !reflect.DeepEqual(left, openstacksim.Objects{}) {
		t.Fatalf("objects left in the deleted project: %+v", left)
	}
	if w.sim.HasQuotaOverrides("nova", p.ID) || w.sim.HasQuotaOverrides("cinder", p.ID) {
		t.Fatal("quota overrides of the deleted project are left")
	}
	// Terminate again (a repeated pass): nothing to do, no project made.
	if got, err := again.Servers(ctx, w.ref); err != nil || len(got) != 0 {
		t.Fatalf("Servers of a terminated cluster: %v %v", got, err)
	}
	if err := again.TearDown(ctx, w.ref); err != nil || w.sim.ProjectCount() != 1 {
		t.Fatalf("second TearDown: %v, %d projects", err, w.sim.ProjectCount())
	}
}
