package rancher

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
	"github.com/waldur/site-agent/internal/failure"
)

// Invalid requests fail with a user-facing error before anything is created.
func TestCreateRejectsInvalidRequests(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(nil)
	cases := []struct {
		name string
		mod  func(*backends.CreateRequest)
		want string
	}{
		{"no customer slug", func(r *backends.CreateRequest) { r.Resource.CustomerSlug = "" }, "unset or missing slug fields"},
		{"underscore", func(r *backends.CreateRequest) { r.Name = "my_gpus" }, "is not valid"},
		{"half a gpu", func(r *backends.CreateRequest) { r.Resource.Limits["gpu"] = 0.5 }, "whole number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := backends.CreateRequest{Resource: f.resource(1), Name: "res-1"}
			req.Resource.Limits = req.Resource.Limits.Clone()
			tc.mod(&req)
			_, err := be.(backends.Provisioner).Create(ctxT(t), req)
			msg, public := failure.PublicMessage(err)
			if !public || failure.IsTransient(err) || !strings.Contains(msg, tc.want) {
				t.Fatalf("want a permanent public error mentioning %q, got %v", tc.want, err)
			}
			if n := len(f.rs.Projects()); n != 0 {
				t.Fatalf("%d projects created for an invalid request", n)
			}
		})
	}
}

// A name taken by another resource's project, by a project nobody manages, or by a foreign
// namespace gives ErrDuplicate (the core then tries the next name) and creates nothing.
func TestCreateRefusesForeignNames(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(nil)
	ctx := ctxT(t)
	if _, err := f.rs.AddProject(f.cluster, f.prefix+"res-1", map[string]string{annManaged: "true", annResourceUUID: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rs.AddProject(f.cluster, f.prefix+"res-2", nil); err != nil {
		t.Fatal(err)
	}
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.prefix + "res-3"}}
	if _, err := f.env.Clientset.CoreV1().Namespaces().Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.env.Clientset.CoreV1().Namespaces().Delete(ctx, foreign.Name, metav1.DeleteOptions{}) })
	for i := 1; i <= 3; i++ {
		res := f.resource(i)
		_, err := be.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: res, Name: res.Slug})
		if !errors.Is(err, failure.ErrDuplicate) {
			t.Fatalf("%s: want ErrDuplicate, got %v", res.Slug, err)
		}
	}
	if n := len(f.rs.Projects()); n != 2 {
		t.Fatalf("projects: %d, want only the 2 seeded", n)
	}
	// The core's next candidate succeeds.
	res := f.resource(3)
	if _, err := be.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: res, Name: res.Slug + "-1"}); err != nil {
		t.Fatal(err)
	}
}

// A site migrating from the incumbent: its projects (no waldur/resource_uuid) and namespaces
// (created through /v3/clusters/<id>/namespaces) are adopted, not duplicated.
func TestAdoptsIncumbentObjects(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	be := f.backend(nil, WithInventoryTTL(0))
	ctx := ctxT(t)
	res := f.resource(1)
	legacy := map[string]string{annOrganization: "cust", annManaged: "true", annProjectSlug: "proj"}
	p1, err := f.rs.AddProject(f.cluster, f.prefix+"res-1", legacy)
	if err != nil {
		t.Fatal(err)
	}
	f.normanNamespace(p1.Name, p1.ID) // Rancher writes it again moments later (ranchersim/nsauth.go)
	// Resource 2 is already recorded in Waldur with the incumbent's project id.
	p2, err := f.rs.AddProject(f.cluster, f.prefix+"res-2", legacy)
	if err != nil {
		t.Fatal(err)
	}
	info, err := be.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: res, Name: res.Slug})
	if err != nil || info.BackendID != p1.ID {
		t.Fatalf("create adopts %s: got %+v %v", p1.ID, info, err)
	}
	ns1, err := f.env.Clientset.CoreV1().Namespaces().Get(ctx, p1.Name, metav1.GetOptions{})
	if err != nil || ns1.Labels[psaEnforce] != "restricted" || ns1.Annotations[annResourceUUID] != res.UUID || ns1.Annotations["lifecycle.cattle.io/create.namespace-auth"] != "true" {
		t.Fatalf("the incumbent's namespace, labelled after Rancher's own write: %+v %v", ns1, err)
	}
	r2 := f.resource(2)
	r2.BackendID = p2.ID
	if err := be.(backends.Reconciler).Reconcile(ctx, r2); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.rs.Projects() {
		want := map[string]string{annOrganization: "cust", annManaged: "true", annProjectSlug: "proj",
			annGroup: scopedGroupName(f.cluster, "proj", "workloads-manage")} // no binding of the incumbent's group to adopt
		want[annResourceUUID] = map[string]string{p1.ID: res.UUID, p2.ID: r2.UUID}[p.ID]
		if d := cmp.Diff(want, p.Annotations); d != "" {
			t.Errorf("%s annotations (-want +got):\n%s", p.ID, d)
		}
	}
	if n := len(f.rs.Projects()); n != 2 {
		t.Fatalf("%d projects, want 2", n)
	}
	ns, err := f.env.Clientset.CoreV1().Namespaces().Get(ctx, f.prefix+"res-2", metav1.GetOptions{})
	if err != nil || ns.Annotations[projectIDKey] != p2.ID {
		t.Fatalf("reconcile gives the incumbent's project its namespace: %v %v", ns, err)
	}
	res.BackendID = p1.ID
	for _, r := range []backends.Resource{res, r2} {
		if err := be.(backends.Provisioner).Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLookupLimitsMetadata(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	be := f.backend(nil)
	res := f.resource(1)
	res.Limits["pods"] = 20 // not a quota: passed through
	info, err := be.(backends.Provisioner).Create(ctxT(t), backends.CreateRequest{Resource: res, Name: res.Slug})
	if err != nil {
		t.Fatal(err)
	}
	res.BackendID = info.BackendID
	want := backends.Quantities{"cpu": 2, "ram": 4, "storage": 10, "gpu": 1, "pods": 20}
	if d := cmp.Diff(want, info.Limits); d != "" {
		t.Fatalf("create limits (-want +got):\n%s", d)
	}
	got, err := be.(backends.Provisioner).Lookup(ctxT(t), res)
	if err != nil || !cmp.Equal(want, got.Limits) {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	lim, err := be.(backends.LimitsReader).Limits(ctxT(t), res)
	if err != nil || !cmp.Equal(want, lim) {
		t.Fatalf("limits: %v %v", lim, err)
	}
	md1, err := be.(backends.MetadataReader).Metadata(ctxT(t), res)
	if err != nil {
		t.Fatal(err)
	}
	md2, _ := be.(backends.MetadataReader).Metadata(ctxT(t), res)
	if !cmp.Equal(md1, md2) || md1["rancher_project_id"] != res.BackendID || md1["keycloak_group"] != scopedGroupName(f.cluster, "proj", "workloads-manage") {
		t.Fatalf("metadata %v / %v", md1, md2)
	}
	if q := md1["quota"].(map[string]string); q["limits.memory"] != "4Gi" {
		t.Fatalf("quota in metadata: %v", q)
	}
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
}

func TestPingAndDiagnose(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	be := f.backend(nil)
	ctx := ctxT(t)
	if err := be.(backends.Pinger).Ping(ctx); err != nil {
		t.Fatal(err)
	}
	checks := backendtest.Checks(ctx, be.(backends.Diagnoser))
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Detail)
		}
	}
	want := []string{"rancher api", "rancher token", "rancher cluster", "managed projects", "quota components", "kubernetes proxy",
		"kubernetes rights", "keycloak realm", "keycloak server", "keycloak rights"}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("checks (-want +got):\n%s", d)
	}
	f.rs.SetClusterState(f.cluster, "unavailable")
	if err := be.(backends.Pinger).Ping(ctx); !errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("unavailable cluster: %v", err)
	}
	bad := f.backend(map[string]any{"password": "wrong-secret", "cluster_id": "c-m-other"})
	// A wrong key: Rancher's lines stop at the API, the proxy fails on its own, and Keycloak is
	// still checked (every upstream is, whatever the others say).
	probes := bad.(backends.Diagnoser).Probes()
	var upstreams []string
	for _, p := range probes {
		upstreams = append(upstreams, p.Upstream)
	}
	if d := cmp.Diff([]string{"rancher", "kubernetes", "keycloak"}, upstreams); d != "" {
		t.Fatalf("probes (-want +got):\n%s", d)
	}
	checks = probes[0].Run(ctx)
	if len(checks) != 1 || checks[0].OK || !strings.Contains(checks[0].Detail, "HTTP 401") || strings.Contains(checks[0].Detail, "wrong-secret") {
		t.Fatalf("bad key: %+v", checks)
	}
	if kube := probes[1].Run(ctx); len(kube) != 1 || kube[0].OK || strings.Contains(kube[0].Detail, "wrong-secret") {
		t.Fatalf("bad key, proxy: %+v", kube)
	}
	if kc := probes[2].Run(ctx); len(kc) == 0 || !kc[0].OK {
		t.Fatalf("bad Rancher key, Keycloak still checked: %+v", kc)
	}
	unknown := f.backend(map[string]any{"cluster_id": "c-m-other"})
	if err := unknown.(backends.Pinger).Ping(ctx); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("unknown cluster: %v", err)
	}
	f.kc.SetAdminRoles("query-users") // may list users, not groups
	f.rs.SetClusterState(f.cluster, "active")
	for _, c := range backendtest.Checks(ctx, f.backend(nil).(backends.Diagnoser)) {
		if c.Name == "keycloak rights" && c.OK {
			t.Fatalf("query-users cannot manage groups, yet: %+v", c)
		}
	}
}
