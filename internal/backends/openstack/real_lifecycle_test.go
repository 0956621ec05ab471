package openstack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// tenantObjects counts a project's Neutron objects through the admin API.
type tenantObjects struct{ Networks, Subnets, Routers, Interfaces, SecurityGroups int }

func (r *realEnv) objects(t testing.TB, projectID string) tenantObjects {
	t.Helper()
	ctx := context.Background()
	var o tenantObjects
	count := func(n int, err error) int {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		return n
	}
	o.Networks = count(listLen(ctx, networks.List(r.network, networks.ListOpts{ProjectID: projectID}), networks.ExtractNetworks))
	o.Subnets = count(listLen(ctx, subnets.List(r.network, subnets.ListOpts{ProjectID: projectID}), subnets.ExtractSubnets))
	o.Routers = count(listLen(ctx, routers.List(r.network, routers.ListOpts{ProjectID: projectID}), routers.ExtractRouters))
	o.Interfaces = count(listLen(ctx, ports.List(r.network, ports.ListOpts{ProjectID: projectID, DeviceOwner: "network:router_interface"}), ports.ExtractPorts))
	// Listing groups filtered by project makes Neutron create that project's "default"
	// group; list them all and filter here instead.
	page, err := groups.List(r.network, groups.ListOpts{}).AllPages(ctx)
	if err == nil {
		var all []groups.SecGroup
		if all, err = groups.ExtractGroups(page); err == nil {
			for _, g := range all {
				if g.ProjectID == projectID {
					o.SecurityGroups++
				}
			}
		}
	}
	if err != nil {
		t.Fatalf("list security groups: %v", err)
	}
	return o
}

func listLen[T any](ctx context.Context, pager pagination.Pager, extract func(pagination.Page) ([]T, error)) (int, error) {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return 0, err
	}
	all, err := extract(page)
	return len(all), err
}

var finishedTenant = tenantObjects{Networks: 1, Subnets: 1, Routers: 1, Interfaces: 1, SecurityGroups: 5}

// step logs how long each stage of a real test took.
func step(t *testing.T, name string, fn func()) {
	t.Helper()
	start := time.Now()
	fn()
	t.Logf("%-44s %6.2fs", name, time.Since(start).Seconds())
}

// The whole life of a tenant against the real services: create with a tenant user, usage
// from a real Cinder volume, an update below usage refused, pause and restore, terminate
// refused while the volume exists and forced with force_destroy.
func TestRealTenantLifecycle(t *testing.T) {
	r := loadReal(t)
	store := newMemSecrets()
	settings := map[string]any{"create_tenant_user": true, "credentials_path": "kv/site-agent/" + r.run}
	b := r.backend(t, backendOpts{secrets: store, settings: settings})
	res := realResource(r.run)(1)
	step(t, "create", func() { res = create(t, b.Backend, res, "life") })
	t.Cleanup(func() {
		_ = r.backend(t, backendOpts{secrets: store, settings: map[string]any{"force_destroy": true}}).Delete(context.Background(), res)
	})
	if got := r.objects(t, res.BackendID); got != finishedTenant {
		t.Fatalf("tenant objects %+v, want %+v", got, finishedTenant)
	}
	creds, err := store.Get(ctxT(t), "kv/site-agent/"+r.run+"/sa-"+r.run+"-life")
	if err != nil {
		t.Fatalf("tenant credentials: %v", err)
	}
	step(t, "tenant user creates a 3 GB volume", func() { r.createVolume(t, creds, 3) })
	step(t, "usage", func() { checkRealUsage(t, b, res) })
	step(t, "update below usage", func() {
		err := b.SetLimits(ctxT(t), res, backends.Quantities{"cores": 4, "ram": 8192, "storage": 2, "floating_ip": 2, "net": 3})
		if msg, ok := failure.PublicMessage(err); !ok || !strings.Contains(msg, "storage") {
			t.Fatalf("want a refusal naming storage, got %v", err)
		}
	})
	step(t, "pause, limits, restore", func() { r.pauseAndRestore(t, b, res) })
	step(t, "delete refused while the volume exists", func() {
		if _, ok := failure.PublicMessage(b.Delete(ctxT(t), res)); !ok {
			t.Fatal("delete with a volume must be refused with a message")
		}
	})
	settings["force_destroy"] = true
	step(t, "delete with force_destroy", func() {
		if err := r.backend(t, backendOpts{secrets: store, settings: settings}).Delete(ctxT(t), res); err != nil {
			t.Fatal(err)
		}
	})
	r.checkGone(t, b, res, store, creds["username"])
}

func checkRealUsage(t *testing.T, b *realBackend, res backends.Resource) {
	t.Helper()
	got, err := b.Usage(ctxT(t), []backends.Resource{res}, backends.Period{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if u := got[res.BackendID].Total; u["storage"] != 3 || u["net"] != 1 || u["cores"] != 0 {
		t.Fatalf("usage = %v, want storage 3, net 1, cores 0", u)
	}
}

// checkGone verifies a terminated tenant left nothing: project, Neutron objects, tenant user,
// stored credentials.
func (r *realEnv) checkGone(t *testing.T, b *realBackend, res backends.Resource, store *memSecrets, tenantUser string) {
	t.Helper()
	if _, err := b.Lookup(ctxT(t), res); err == nil {
		t.Fatal("project still exists")
	}
	if got := r.objects(t, res.BackendID); got != (tenantObjects{}) {
		t.Errorf("objects left: %+v", got)
	}
	if len(store.paths()) != 0 {
		t.Errorf("credentials left: %v", store.paths())
	}
	page, _ := users.List(r.identity, users.ListOpts{Name: tenantUser}).AllPages(ctxT(t))
	if all, _ := users.ExtractUsers(page); len(all) != 0 {
		t.Errorf("tenant user left")
	}
}

func (r *realEnv) createVolume(t *testing.T, creds map[string]string, size int) string {
	t.Helper()
	p, err := gos.AuthenticatedClient(ctxT(t), gophercloud.AuthOptions{IdentityEndpoint: creds["auth_url"], Username: creds["username"],
		Password: creds["password"], DomainName: creds["user_domain_name"], Scope: &gophercloud.AuthScope{ProjectID: creds["project_id"]}})
	if err != nil {
		t.Fatalf("tenant user login: %v", err)
	}
	vc, err := gos.NewBlockStorageV3(p, r.env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	v, err := volumes.Create(ctxT(t), vc, volumes.CreateOpts{Size: size, Name: "sa-test"}, nil).Extract()
	if err != nil {
		t.Fatalf("create volume as tenant user: %v", err)
	}
	return v.ID
}

func (r *realEnv) pauseAndRestore(t *testing.T, b *realBackend, res backends.Resource) {
	t.Helper()
	if err := b.Pause(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	nq, err := computequotas.Get(ctxT(t), r.compute, res.BackendID).Extract()
	if err != nil || nq.Cores != 0 || nq.RAM != 0 {
		t.Fatalf("nova quotas while paused: %+v, %v; want cores and ram 0", nq, err)
	}
	cq, err := volumequotas.Get(ctxT(t), r.volume, res.BackendID).Extract()
	if err != nil || cq.Gigabytes != 3 {
		t.Fatalf("cinder gigabytes while paused: %+v, %v; want 3 (held at usage: Cinder refuses less)", cq, err)
	}
	if q := realQuotas(t, b, res); q["cores"] != 0 || q["gigabytes"] != 3 {
		t.Fatalf("metadata quotas while paused = %v; want what OpenStack holds", q)
	}
	if err := b.Restore(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	if q := realQuotas(t, b, res); q["cores"] != 4 || q["gigabytes"] != 50 || q["ram"] != 8192 {
		t.Fatalf("metadata quotas after restore = %v", q)
	}
}

// realQuotas returns the quotas the backend reports as metadata.
func realQuotas(t *testing.T, b *realBackend, res backends.Resource) map[string]any {
	t.Helper()
	md, err := b.Metadata(ctxT(t), res)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := md["quotas"].(map[string]any)
	return q
}
