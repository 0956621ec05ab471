package waldurclient

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

func TestVersionAtLeast(t *testing.T) {
	cases := []struct {
		have, want    string
		atLeast, know bool
	}{
		{"8.0.5", ResourceProjectsSince, false, true}, {"8.0.8", ResourceProjectsSince, true, true},
		{"8.0.9", MembershipSyncStatusesSince, false, true}, {"8.1.0", MembershipSyncStatusesSince, true, true},
		{"8.1.0rc19", MembershipSyncStatusesSince, false, true}, {"8.1.0.dev3", "8.1.0", false, true},
		{"8.1.0rc19", "8.1.0rc2", true, true}, {"8.10.1", "8.9.9", true, true}, {"9", "8.1.0", true, true},
		{"v8.2.0", "8.1.0", true, true}, {"develop", "8.0.8", false, false}, {"", "8.0.8", false, false},
	}
	for _, c := range cases {
		got, known := VersionAtLeast(c.have, c.want)
		if got != c.atLeast || known != c.know {
			t.Errorf("VersionAtLeast(%q, %q) = %v, %v; want %v, %v", c.have, c.want, got, known, c.atLeast, c.know)
		}
	}
}

// The resource-project calls against the simulator, which validates them against the contract
// addendum: every page is read, and the writes land.
func TestResourceProjectCalls(t *testing.T) {
	sim, srv, res, users, rps := seedResourceProjects(t)
	c, err := New(Options{BaseURL: srv.URL, Token: secret.New("test-token")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := c.ListResourceProjects(ctx, res.UUID)
	if err != nil || len(got) != 305 || got[0].UUID != rps[0].UUID || got[0].State != ProjectCreating || got[0].Limits["cpu"] != float64(2000) {
		t.Fatalf("resource projects: %d %v %+v", len(got), err, got[0])
	}
	members, err := c.ResourceProjectUsers(ctx, rps[0].UUID)
	if err != nil || len(members) != 301 || members[0].RoleName != "project_member" || members[0].UserUUID == "" {
		t.Fatalf("members: %d %v", len(members), err)
	}
	owners, err := c.ResourceUsers(ctx, res.UUID)
	if d := cmp.Diff([]UserRole{{RoleName: "resource_admin", UserUUID: users[1].UUID, UserUsername: "ben"}}, owners); err != nil || d != "" {
		t.Fatalf("resource users %v (-want +got):\n%s", err, d)
	}
	if err := c.SetResourceProjectErred(ctx, rps[1].UUID, "operator: failed"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetResourceProjectOK(ctx, rps[2].UUID); err != nil {
		t.Fatal(err)
	}
	if a, _ := sim.ResourceProject(rps[1].UUID); a.State != waldursim.ProjectErred || a.ErrorMessage != "operator: failed" {
		t.Fatalf("erred: %+v", a)
	}
	if b, _ := sim.ResourceProject(rps[2].UUID); b.State != waldursim.ProjectOK {
		t.Fatalf("ok: %+v", b)
	}
	out, err := c.SetMembershipSyncStatuses(ctx, res.UUID, []MemberSyncStatus{
		{Username: "ann", ScopeType: "resource_project", ResourceProjectUUID: rps[0].UUID, RoleName: "project_member", State: "synced"},
		{UserUUID: users[1].UUID, ScopeType: "resource", RoleName: "resource_admin", State: "pending"},
		{Username: "ghost", ScopeType: "resource", RoleName: "resource_admin", State: "error", Message: "x"},
	})
	if d := cmp.Diff(SyncStatusResult{Stored: 2, Skipped: []string{"ghost"}}, out); err != nil || d != "" {
		t.Fatalf("report %v (-want +got):\n%s", err, d)
	}
	if v, err := c.Version(ctx); err != nil || v != waldursim.AddendumVersion {
		t.Fatalf("version %q %v", v, err)
	}
}

// seedResourceProjects is a simulator with a resource of 305 resource projects, the first with
// 301 members, and a resource-level role of "ben".
func seedResourceProjects(t *testing.T) (*waldursim.Server, *httptest.Server, waldursim.Resource, []waldursim.User, []waldursim.ResourceProject) {
	sim := waldursim.New(waldursim.Options{Version: waldursim.AddendumVersion})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sim.AssertNoViolations(t) })
	cust := sim.AddCustomer(waldursim.Customer{Name: "Org"})
	off := sim.AddOffering(waldursim.Offering{Name: "Rancher", CustomerUUID: cust.UUID,
		PluginOptions: map[string]any{"enable_membership_sync_status": true}})
	proj := sim.AddProject(waldursim.Project{Name: "P", CustomerUUID: cust.UUID})
	res := sim.AddResource(waldursim.Resource{Name: "cluster", OfferingUUID: off.UUID, ProjectUUID: proj.UUID, BackendID: "c-m-1"})
	var users []waldursim.User
	for _, n := range []string{"ann", "ben"} {
		users = append(users, sim.AddUser(waldursim.User{Username: n, FullName: n}))
	}
	var rps []waldursim.ResourceProject
	for i := range 305 { // more than one page of 300
		rps = append(rps, sim.AddResourceProject(waldursim.ResourceProject{ResourceUUID: res.UUID, Name: "rp" + string(rune('a'+i%26)),
			Limits: map[string]any{"cpu": 2000}}))
	}
	for i := range 301 {
		u := sim.AddUser(waldursim.User{Username: "u" + time.Duration(i).String(), FullName: "x"})
		sim.GrantRole(rps[0].UUID, u.UUID, "project_member")
	}
	sim.GrantRole(res.UUID, users[1].UUID, "resource_admin")
	return sim, srv, res, users, rps
}
