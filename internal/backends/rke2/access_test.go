package rke2

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// TestTeamAccessThroughKeycloak: team sync puts users into the cluster's group (created under
// c_<cluster>, bound to the cluster once, the Rancher cluster read once), removes them, and terminate removes the group, its
// parent and the binding.
func TestTeamAccessThroughKeycloak(t *testing.T) {
	ctx := context.Background()
	w := newMemWorld(t, 11)
	info, _ := createCluster(t, w, 1, 1)
	sim := keycloaksim.New(keycloaksim.Options{})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	kc, err := keycloak.New(keycloak.Config{URL: srv.URL + "/", Username: "admin", Password: secret.New("admin"), VerifyTLS: true}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	sim.AddUser("alice")
	sim.AddUser("bob")
	b := memBackend(t, w)
	wa := WithAccess{Backend: b, Access: b.AccessFor(kc, "")}
	res := clusterResource(1, 1)
	res.BackendID = info.BackendID
	w.mu.Lock()
	reads := w.calls["Cluster"]
	w.mu.Unlock()
	for range 2 {
		if err := wa.AddMembers(ctx, res, []backends.Member{{Username: "alice"}, {Username: "bob"}, {Username: "carol"}}); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	reads = w.calls["Cluster"] - reads
	w.mu.Unlock()
	if reads != 1 { // issue 17 item 14: the management id is remembered
		t.Fatalf("two team syncs read the Rancher cluster %d times, want once", reads)
	}
	got, err := wa.Members(ctx, res)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
		t.Fatalf("members %v %v", got, err)
	}
	if g := sim.Groups()["/c_prod/c_prod_cluster-member"]; !slices.Equal(g, []string{"alice", "bob"}) {
		t.Fatalf("keycloak groups %v", sim.Groups())
	}
	if err := wa.RemoveMembers(ctx, res, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := wa.Members(ctx, res); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("after removal %v", got)
	}
	if p := wa.Principal("prod"); p != "keycloakoidc_group://c_prod_cluster-member" || len(w.bindings) != 1 ||
		!w.bindings["c-m-"+testCluster[:8]+" cluster-member "+p] {
		t.Fatalf("principal %s, bindings %v", p, w.bindings)
	}
	w.terminating[testCluster] = true
	cyclesUntilDone(t, w, "terminate", func() error { return wa.Delete(ctx, res) })
	if len(sim.Groups()) != 0 || len(w.bindings) != 0 {
		t.Fatalf("left after terminate: groups %v, bindings %v", sim.Groups(), w.bindings)
	}
}
