package novainfra_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
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

func (w *perClusterWorld) infra(t *testing.T, force bool) interface {
	EnsureNetwork(context.Context, rke2.ClusterRef) (rke2.NetworkInfo, error)
	CreateServer(context.Context, rke2.ClusterRef, rke2.NetworkInfo, rke2.ServerRequest) (rke2.ServerView, error)
	Servers(context.Context, rke2.ClusterRef) ([]rke2.ServerView, error)
	DeleteServer(context.Context, rke2.ClusterRef, rke2.ServerView) error
	ClearLeftovers(context.Context, rke2.ClusterRef) error
	TearDown(context.Context, rke2.ClusterRef) error
} {
	return simInfraOn(t, w.sim, w.url, tenantMaxima, map[string]any{"tenant": "per_cluster", "force_destroy": force})
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
	v := w.create(t, w.infra(t, false))
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
	again := w.infra(t, false)
	v2 := w.create(t, again)
	if n := w.sim.ProjectCount(); n != 2 || v2.ID != v.ID || len(w.sim.Servers()) != 1 {
		t.Fatalf("after a second Create: %d projects, server %s (first %s), %d servers", n, v2.ID, v.ID, len(w.sim.Servers()))
	}

	// Terminate: leftovers (none), the server, the chain and the project.
	if err := again.ClearLeftovers(ctx, w.ref); err != nil {
		t.Fatalf("ClearLeftovers with nothing foreign: %v", err)
	}
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

// Terminate with things others made in the cluster's project: refused, naming each, unless
// force_destroy; then they are deleted and the cluster's own server is left to terminate.
func TestPerClusterLeftovers(t *testing.T) {
	w := newPerClusterWorld(t)
	ctx := context.Background()
	v := w.create(t, w.infra(t, false))
	p := w.project(t)
	foreignVM := w.sim.AddServer(p.ID, 1, 512)
	foreignVol := w.sim.AddVolume(p.ID, 10)
	lb := w.sim.AddLoadBalancer(p.ID, 1)
	err := w.infra(t, false).ClearLeftovers(ctx, w.ref)
	if err == nil || failure.IsTransient(err) {
		t.Fatalf("ClearLeftovers with foreign objects: %v, want a permanent refusal", err)
	}
	for _, want := range []string{"server vm-", "(" + foreignVM + ")", "volume vol-", "(" + foreignVol + ")", "load balancer", "(" + lb + ")", "force_destroy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), v.ID) || strings.Contains(err.Error(), v.Name) {
		t.Errorf("refusal %q names the cluster's own server", err)
	}
	if len(w.sim.Servers()) != 2 {
		t.Fatal("a refusal deleted something")
	}
	if err := w.infra(t, true).ClearLeftovers(ctx, w.ref); err != nil {
		t.Fatalf("ClearLeftovers with force_destroy: %v", err)
	}
	srv := w.sim.Servers()
	if len(srv) != 1 || srv[0].ID != v.ID {
		t.Fatalf("servers after force_destroy: %+v, want only the cluster's", srv)
	}
	if o := w.sim.ObjectsOf(p.ID); o.Volumes != 2 || o.LoadBalancers != 0 {
		t.Fatalf("after force_destroy: %+v, want the node's 2 volumes and no load balancer", o)
	}
}

// tenant: shared: a server and a bare port someone put on the cluster network block the
// teardown, named; force_destroy deletes them.
func TestSharedNetworkLeftovers(t *testing.T) {
	w := newPerClusterWorld(t)
	sim, ref := w.sim, w.ref
	in := simInfraOn(t, sim, w.url, nil, nil)
	ctx := context.Background()
	before := sim.ObjectsOf(sim.AdminProjectID())
	ni, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.CreateServer(ctx, ref, ni, simRequest(ref, false))
	if err != nil {
		t.Fatal(err)
	}
	vm := sim.AddServer(sim.AdminProjectID(), 1, 512)
	vmPort := sim.AddPort(ni.NetworkID, "", vm, "compute:nova")
	bare := sim.AddPort(ni.NetworkID, "user-port", "", "")
	err = in.ClearLeftovers(ctx, ref)
	if err == nil || failure.IsTransient(err) {
		t.Fatalf("ClearLeftovers: %v, want a permanent refusal", err)
	}
	for _, want := range []string{"server vm-", "(" + vm + ")", "port user-port (" + bare + ")"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), v.ID) || strings.Contains(err.Error(), vmPort) {
		t.Errorf("refusal %q names the cluster's server or the foreign server's port", err)
	}
	forced := simInfraOn(t, sim, w.url, nil, map[string]any{"force_destroy": true})
	if err := forced.ClearLeftovers(ctx, ref); err != nil {
		t.Fatalf("force_destroy: %v", err)
	}
	srv := sim.Servers()
	if len(srv) != 1 || srv[0].ID != v.ID {
		t.Fatalf("servers after force_destroy: %+v", srv)
	}
	if err := forced.DeleteServer(ctx, ref, v); err != nil {
		t.Fatal(err)
	}
	if err := forced.TearDown(ctx, ref); err != nil {
		t.Fatalf("TearDown after force_destroy: %v", err)
	}
	after := sim.ObjectsOf(sim.AdminProjectID())
	after.SecurityGroups, after.Rules, after.GroupNames = before.SecurityGroups, before.Rules, before.GroupNames // Neutron's "default" stays
	if !reflect.DeepEqual(after, before) || sim.ProjectCount() != 1 {
		t.Fatalf("shared project after terminate: %+v, before %+v; %d projects", after, before, sim.ProjectCount())
	}
}

// The largest order (5 servers + the worker_nodes limit of 20 agents) needs 25 instances and
// 25 volumes: the cluster's project gets them although OpenStack's defaults are 10; the
// tenant maxima stay as they are, and quotas the defaults cover are not overridden.
func TestPerClusterQuotasCoverLargestOrder(t *testing.T) {
	w := newPerClusterWorld(t)
	twenty := 20.0
	in := simInfraOn(t, w.sim, w.url, tenantMaxima, map[string]any{"tenant": "per_cluster"},
		backends.Component{Name: "worker_nodes", AccountingType: "limit", Limit: &twenty})
	if _, err := in.EnsureNetwork(context.Background(), w.ref); err != nil {
		t.Fatal(err)
	}
	p := w.project(t)
	if q := w.sim.Quotas("nova", p.ID); q["instances"] != 25 || q["cores"] != 16 || q["ram"] != 32*1024 {
		t.Fatalf("nova quotas %v, want 25 instances and the maxima", q)
	}
	if q := w.sim.Quotas("cinder", p.ID); q["volumes"] != 25 || q["gigabytes"] != 500 {
		t.Fatalf("cinder quotas %v, want 25 volumes and the 500 GB maximum", q)
	}
	if w.sim.HasQuotaOverrides("neutron", p.ID) {
		t.Fatalf("neutron quotas overridden: %v (25 ports are within the default)", w.sim.Quotas("neutron", p.ID))
	}
}
