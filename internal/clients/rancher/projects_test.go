package rancher

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/upstream"
)

const cluster = "c-m-sim00001"

// Projects and bindings against the simulator's v3 API: create, list (all, by name, paged by a
// server that ignores limit=-1), update, filters with ":" and "/" in values, delete. Nothing is
// read before the first call (no GET /v3 or schema document).
func TestProjectsAndBindings(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	ctx := ctxT(t)
	if c, err := w.c.Cluster(ctx, cluster); err != nil || c.ID != cluster || c.State != "active" {
		t.Fatalf("cluster: %+v %v", c, err)
	}
	if calls := w.sim.Calls(); calls["root"] != 0 || calls["schemas.list"] != 0 || calls["cluster.get"] != 1 {
		t.Fatalf("calls %v: one request, no schema bootstrap", calls)
	}
	ann := map[string]string{"waldur/managed": "true"}
	p1, err := w.c.CreateProject(ctx, NewProject{ClusterID: cluster, Name: "alpha", Description: "d", Annotations: ann})
	if err != nil || !strings.HasPrefix(p1.ID, cluster+":p-") || p1.Name != "alpha" || p1.Annotations["waldur/managed"] != "true" {
		t.Fatalf("create: %+v %v", p1, err)
	}
	for _, n := range []string{"beta", "gamma", "alpha-1", "delta"} {
		if _, err := w.c.CreateProject(ctx, NewProject{ClusterID: cluster, Name: n, Annotations: ann}); err != nil {
			t.Fatal(err)
		}
	}
	if all, err := w.c.Projects(ctx, cluster, ""); err != nil || len(all) != 7 { // and Default, System
		t.Fatalf("list: %d %v", len(all), err)
	}
	if only, err := w.c.Projects(ctx, cluster, "alpha"); err != nil || len(only) != 1 || only[0].ID != p1.ID {
		t.Fatalf("name filter: %+v %v", only, err)
	}
	w.sim.ResetCalls()
	paged, err := listAll[Project](ctx, w.c, "/v3/projects", query("clusterId", cluster, "limit", "2"))
	if err != nil || len(paged) != 7 || w.sim.Calls()["projects.list"] != 4 {
		t.Fatalf("following pagination.next: %d projects in %d pages, %v", len(paged), w.sim.Calls()["projects.list"], err)
	}
	upd, err := w.c.SetProjectAnnotations(ctx, p1.ID, map[string]string{"waldur/managed": "true", "u": "1"})
	if err != nil || upd.Annotations["u"] != "1" {
		t.Fatalf("update: %+v %v", upd, err)
	}
	principal := "keycloakoidc_group://project_p_x"
	bd, err := w.c.CreateBinding(ctx, p1.ID, "workloads-manage", principal)
	if err != nil || bd.ProjectID != p1.ID || bd.GroupPrincipalID != principal {
		t.Fatalf("binding: %+v %v", bd, err)
	}
	found, err := w.c.Bindings(ctx, BindingFilter{ProjectID: p1.ID, GroupPrincipalID: principal, RoleTemplateID: "workloads-manage"})
	if err != nil || len(found) != 1 || found[0].ID != bd.ID {
		t.Fatalf("binding filter: %+v %v", found, err)
	}
	if err := w.c.DeleteProject(ctx, p1.ID); err != nil {
		t.Fatal(err)
	}
	// Rancher still answers it, as "removing", for a while: it reads as not found at once.
	if _, err = w.c.Project(ctx, p1.ID); !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) {
		t.Fatalf("deleted project: want ErrNotFound, got %v", err)
	}
	if all, err := w.c.Projects(ctx, cluster, ""); err != nil || slices.ContainsFunc(all, func(p Project) bool { return p.ID == p1.ID }) {
		t.Fatalf("a project being deleted is listed: %v %v", all, err)
	}
	time.Sleep(150 * time.Millisecond) // the simulator's RemoveDelay: Rancher's controllers have run
	if left, _ := w.c.Bindings(ctx, BindingFilter{ProjectID: p1.ID}); len(left) != 0 {
		t.Fatalf("bindings of a deleted project remain: %+v", left)
	}
	if err := w.c.DeleteBinding(ctx, bd.ID); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("deleting a binding that went with its project: %v", err)
	}
}

// Issue 16: Rancher lists a deleted binding, with `removed`, until its controllers have run;
// Bindings leaves such a binding out (two Terminates sharing a Keycloak group each saw the
// other's binding on its way out and kept the group for it).
func TestBindingsLeaveOutThoseBeingDeleted(t *testing.T) {
	w := newWorld(t, ranchersim.Options{RemoveDelay: time.Minute})
	ctx := ctxT(t)
	p, err := w.c.CreateProject(ctx, NewProject{ClusterID: cluster, Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	principal := "keycloakoidc_group://shared"
	a, errA := w.c.CreateBinding(ctx, p.ID, "workloads-manage", principal)
	b, errB := w.c.CreateBinding(ctx, p.ID, "read-only", principal)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if err := w.c.DeleteBinding(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.Bindings(ctx, BindingFilter{GroupPrincipalID: principal})
	if err != nil || len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("bindings of the group while one is being deleted: %+v %v", got, err)
	}
}

// Errors are classified once: 401 permanent and without the key, transient faults retried,
// a POST repeated only when it cannot have been applied, validation errors permanent.
func TestErrors(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	ctx := ctxT(t)
	t.Run("wrong secret", func(t *testing.T) {
		c, err := New(Config{URL: w.srv.URL, Token: secret.New("token-sim01:not-the-secret"), Transport: w.srv.Client().Transport}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Cluster(ctx, cluster)
		if !failure.HasStatus(err, 401) || failure.IsTransient(err) {
			t.Fatalf("want a permanent 401, got %v", err)
		}
		if strings.Contains(err.Error(), "not-the-secret") || strings.Contains(err.Error(), "token-sim01:") {
			t.Fatalf("error leaks the key: %v", err)
		}
	})
	t.Run("transient failures are retried", func(t *testing.T) {
		w.sim.FailNext("cluster.get", 3, ranchersim.Fault502)
		w.sim.FailNext("cluster.get", 1, ranchersim.FaultReset)
		w.sim.FailNext("cluster.get", 1, ranchersim.Fault429)
		if _, err := w.c.Cluster(ctx, cluster); err != nil {
			t.Fatalf("after 5 transient faults: %v", err)
		}
	})
	t.Run("retries give up with a transient error", func(t *testing.T) {
		w.sim.FailNext("cluster.get", 20, ranchersim.Fault500)
		_, err := w.c.Cluster(ctx, cluster)
		if !failure.IsTransient(err) || !failure.HasStatus(err, 500) {
			t.Fatalf("want transient 500, got %v", err)
		}
	})
	t.Run("a create is not blindly repeated", func(t *testing.T) {
		w.sim.ResetCalls()
		w.sim.FailNext("project.create", 1, ranchersim.Fault500)
		_, err := w.c.CreateProject(ctx, NewProject{ClusterID: cluster, Name: "once"})
		if !failure.IsTransient(err) || w.sim.Calls()["project.create"] != 1 {
			t.Fatalf("POST after a 500: err %v, calls %v", err, w.sim.Calls())
		}
		w.sim.FailNext("project.create", 2, ranchersim.Fault503)
		if _, err := w.c.CreateProject(ctx, NewProject{ClusterID: cluster, Name: "once"}); err != nil {
			t.Fatalf("503 means not applied, so it is retried: %v", err)
		}
	})
	t.Run("validation errors are permanent", func(t *testing.T) {
		_, err := w.c.CreateProject(ctx, NewProject{ClusterID: "c-m-nope", Name: "x"})
		if !failure.HasStatus(err, 422) || failure.IsTransient(err) || !strings.Contains(err.Error(), "InvalidReference") {
			t.Fatalf("want 422 InvalidReference, got %v", err)
		}
	})
	t.Run("the root is Rancher's v3 API", func(t *testing.T) {
		if err := w.c.APIRoot(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The upstreams.rancher section sets the retries: one retry is two attempts.
func TestUpstreamSettings(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	c := w.client(t, w.srv.URL, fast(1))
	w.sim.FailNext("cluster.get", 5, ranchersim.Fault503)
	if _, err := c.Cluster(ctxT(t), cluster); !failure.IsTransient(err) {
		t.Fatalf("want a transient failure, got %v", err)
	}
	if got := w.sim.Calls()["cluster.get"]; got != 2 {
		t.Fatalf("%d attempts, want 2 (retries: 1)", got)
	}
	zero := 0
	for _, tc := range []struct {
		up   upstream.Settings
		want upstream.RetryPolicy
	}{
		{upstream.Settings{}, DefaultRetry},
		{upstream.Settings{Retries: &zero}, upstream.RetryPolicy{Max: 0, WaitMin: DefaultRetry.WaitMin, WaitMax: DefaultRetry.WaitMax}},
		{upstream.Settings{BackoffMax: time.Minute}, upstream.RetryPolicy{Max: DefaultRetry.Max, WaitMin: DefaultRetry.WaitMin, WaitMax: time.Minute}},
	} {
		c, err := New(Config{URL: "https://rancher.example", Upstream: tc.up}, nil)
		if err != nil || c.pol != tc.want {
			t.Errorf("upstream %+v: policy %+v (%v), want %+v", tc.up, c.pol, err, tc.want)
		}
	}
}
