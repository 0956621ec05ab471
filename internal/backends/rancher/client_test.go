package rancher

import (
	"errors"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// The v3 client against the simulator's v3 part (no Kubernetes needed).
func TestV3Client(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	b := core(f.backend(nil))
	ctx := ctxT(t)

	c, err := b.v3.Cluster(ctx, f.cluster)
	if err != nil || c.ID != f.cluster || c.State != "active" {
		t.Fatalf("cluster: %+v %v", c, err)
	}
	if calls := f.rs.Calls(); calls["root"] != 1 || calls["schemas.list"] != 1 {
		t.Fatalf("norman bootstrap: %v", calls)
	}
	ann := map[string]string{annManaged: "true"}
	p1, err := b.v3.CreateProject(ctx, projectInput{ClusterID: f.cluster, Name: "alpha", Description: "d", Annotations: ann})
	if err != nil || !strings.HasPrefix(p1.ID, f.cluster+":p-") || p1.Links["self"] == "" {
		t.Fatalf("create: %+v %v", p1, err)
	}
	for _, n := range []string{"beta", "gamma", "alpha-1", "delta"} {
		if _, err := b.v3.CreateProject(ctx, projectInput{ClusterID: f.cluster, Name: n, Annotations: ann}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := b.v3.Projects(ctx, f.cluster, "")
	if err != nil || len(all) != 5 {
		t.Fatalf("list: %d %v", len(all), err)
	}
	only, err := b.v3.Projects(ctx, f.cluster, "alpha")
	if err != nil || len(only) != 1 || only[0].ID != p1.ID {
		t.Fatalf("name filter: %+v %v", only, err)
	}
	paged, err := listAll[Project](ctx, b.v3, schemaProject, map[string]any{"clusterId": f.cluster, "limit": "2"})
	if err != nil || len(paged) != 5 {
		t.Fatalf("following pagination.next: %d %v", len(paged), err)
	}
	upd, err := b.v3.SetProjectAnnotations(ctx, p1, map[string]string{annManaged: "true", annResourceUUID: "u1"})
	if err != nil || upd.Annotations[annResourceUUID] != "u1" {
		t.Fatalf("update: %+v %v", upd, err)
	}
	bd, err := b.v3.CreateBinding(ctx, bindingInput{ProjectID: p1.ID, RoleTemplateID: "workloads-manage", GroupPrincipalID: principal("project_p_x")})
	if err != nil {
		t.Fatal(err)
	}
	// The principal has ":" and "/": filters must be URL-encoded (the incumbent built them by hand).
	found, err := b.v3.Bindings(ctx, map[string]any{"projectId": p1.ID, "groupPrincipalId": principal("project_p_x"), "roleTemplateId": "workloads-manage"})
	if err != nil || len(found) != 1 || found[0].ID != bd.ID {
		t.Fatalf("binding filter: %+v %v", found, err)
	}
	if err := b.v3.DeleteProject(ctx, p1); err != nil {
		t.Fatal(err)
	}
	_, err = b.v3.Project(ctx, p1.ID)
	if !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) {
		t.Fatalf("deleted project: want ErrNotFound, got %v", err)
	}
	if left, _ := b.v3.Bindings(ctx, map[string]any{"projectId": p1.ID}); len(left) != 0 {
		t.Fatalf("bindings of a deleted project remain: %+v", left)
	}
}

func TestV3Errors(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ctx := ctxT(t)

	t.Run("wrong secret", func(t *testing.T) {
		b := core(f.backend(map[string]any{"password": "not-the-secret"}))
		_, err := b.v3.Cluster(ctx, f.cluster)
		if !failure.HasStatus(err, 401) || failure.IsTransient(err) {
			t.Fatalf("want a permanent 401, got %v", err)
		}
		if strings.Contains(err.Error(), "not-the-secret") || strings.Contains(err.Error(), "token-sim01:") {
			t.Fatalf("error leaks the key: %v", err)
		}
	})
	t.Run("basic auth also works", func(t *testing.T) {
		b := core(f.backend(nil))
		b.v3.opts.TokenKey = ""
		b.v3.opts.AccessKey, b.v3.opts.SecretKey = "token-sim01", "sim-secret"
		if _, err := b.v3.Cluster(ctx, f.cluster); err != nil {
			t.Fatal(err)
		}
	})
	b := core(f.backend(nil))
	t.Run("transient failures are retried", func(t *testing.T) {
		f.rs.FailNext("cluster.get", 3, ranchersim.Fault502)
		f.rs.FailNext("cluster.get", 1, ranchersim.FaultReset)
		f.rs.FailNext("cluster.get", 1, ranchersim.Fault429)
		if _, err := b.v3.Cluster(ctx, f.cluster); err != nil {
			t.Fatalf("after 5 transient faults: %v", err)
		}
	})
	t.Run("retries give up with a transient error", func(t *testing.T) {
		f.rs.FailNext("cluster.get", 20, ranchersim.Fault500)
		_, err := b.v3.Cluster(ctx, f.cluster)
		if !failure.IsTransient(err) || !failure.HasStatus(err, 500) {
			t.Fatalf("want transient 500, got %v", err)
		}
	})
	t.Run("a create is not blindly repeated", func(t *testing.T) {
		f.rs.ResetCalls()
		f.rs.FailNext("project.create", 1, ranchersim.Fault500)
		_, err := b.v3.CreateProject(ctx, projectInput{ClusterID: f.cluster, Name: "once"})
		if !failure.IsTransient(err) || f.rs.Calls()["project.create"] != 1 {
			t.Fatalf("POST after a 500: err %v, calls %v", err, f.rs.Calls())
		}
		f.rs.FailNext("project.create", 2, ranchersim.Fault503)
		if _, err := b.v3.CreateProject(ctx, projectInput{ClusterID: f.cluster, Name: "once"}); err != nil {
			t.Fatalf("503 means not applied, so it is retried: %v", err)
		}
	})
	t.Run("validation errors are permanent", func(t *testing.T) {
		_, err := b.v3.CreateProject(ctx, projectInput{ClusterID: "c-m-nope", Name: "x"})
		if !failure.HasStatus(err, 422) || failure.IsTransient(err) || !strings.Contains(err.Error(), "InvalidReference") {
			t.Fatalf("want 422 InvalidReference, got %v", err)
		}
	})
}

// A lost response to a project POST must not produce a second project: ensureProject looks
// for the name again before posting.
func TestEnsureProjectAfterLostResponse(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	b := core(f.backend(nil))
	res := f.resource(1)
	f.rs.FailNext("project.create", 1, ranchersim.FaultLoseResponse)
	f.rs.FailNext("project.create", 1, ranchersim.Fault500) // a second POST would fail the test below
	p, _, err := b.ensureProject(ctxT(t), res, f.prefix+"res-1")
	if err != nil {
		t.Fatal(err)
	}
	if ps := f.rs.Projects(); len(ps) != 1 || ps[0].ID != p.ID || f.rs.Calls()["project.create"] != 1 {
		t.Fatalf("projects %+v after %d POSTs", ps, f.rs.Calls()["project.create"])
	}
	if err := b.v3.DeleteProject(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
}
