package waldursim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVersionAtLeast(t *testing.T) {
	cases := []struct {
		have, want string
		ok         bool
	}{
		{"8.0.5", "8.0.8", false}, {"8.0.8", "8.0.8", true}, {"8.0.9", "8.1.0", false},
		{"8.1.0", "8.1.0", true}, {"8.1.2", "8.1.0", true}, {"9.0", "8.1.0", true},
		{"8.1.0rc19", "8.1.0", false}, {"8.1.0.dev3", "8.1.0", false}, {"8.1.0rc19", "8.0.8", true},
		{"v8.1.0", "8.1.0", true}, {"develop", "8.1.0", true}, {"8.10.0", "8.9.0", true},
	}
	for _, c := range cases {
		if got := versionAtLeast(c.have, c.want); got != c.ok {
			t.Errorf("versionAtLeast(%q, %q) = %v, want %v", c.have, c.want, got, c.ok)
		}
	}
}

// An older Waldur answers the addendum's operations 404, as the real one would; from their
// first release on they are served.
func TestAddendumOperationsFollowTheVersion(t *testing.T) {
	cases := []struct {
		version      string
		list, report int
	}{{"", 404, 404}, {"8.0.8", 200, 404}, {"8.1.0rc19", 200, 404}, {"8.1.0", 200, 409}}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			w := newWorld(t, Options{Version: c.version})
			want := c.version
			if want == "" {
				want = ContractVersion
			}
			if got := w.call(t, "GET", "/api/version/", nil).object(t)["version"]; got != want {
				t.Fatalf("version %v, want %s", got, want)
			}
			wantStatus(t, w.call(t, "GET", "/api/marketplace-provider-resource-projects/?resource_uuid="+w.resource.UUID, nil), c.list)
			wantStatus(t, w.call(t, "POST", "/api/marketplace-provider-resources/"+w.resource.UUID+"/set_membership_sync_statuses/",
				map[string]any{"statuses": []any{}}), c.report)
			notFound := 0
			for _, v := range w.sim.Violations() {
				if strings.Contains(v, "unknown path") {
					notFound++
				}
			}
			if wantNF := map[int]int{404: 1}[c.list] + map[int]int{404: 1}[c.report]; notFound != wantNF {
				t.Fatalf("violations %v", w.sim.Violations())
			}
		})
	}
}

func TestResourceProjectsListAndUsers(t *testing.T) {
	w := newWorld(t, Options{Version: AddendumVersion})
	other := w.sim.AddResource(Resource{Name: "Other", OfferingUUID: offeringID, ProjectUUID: projectID, BackendID: "c-other"})
	var ids []string
	for i := range 12 {
		rp := w.sim.AddResourceProject(ResourceProject{ResourceUUID: w.resource.UUID, Name: fmt.Sprintf("rp-%02d", i),
			Limits: map[string]any{"cpu": 4000, "memory": "8Gi"}})
		ids = append(ids, rp.UUID)
	}
	w.sim.AddResourceProject(ResourceProject{ResourceUUID: other.UUID, Name: "elsewhere"})
	w.sim.RemoveResourceProject(ids[11])
	page1 := w.call(t, "GET", "/api/marketplace-provider-resource-projects/?resource_uuid="+w.resource.UUID, nil)
	wantStatus(t, page1, 200)
	if got := page1.list(t); len(got) != 10 || page1.header.Get("X-Result-Count") != "12" || !strings.Contains(page1.header.Get("Link"), `rel="next"`) {
		t.Fatalf("first page: %d items, count %s, link %s", len(got), page1.header.Get("X-Result-Count"), page1.header.Get("Link"))
	}
	page2 := w.call(t, "GET", "/api/marketplace-provider-resource-projects/?page=2&resource_uuid="+w.resource.UUID, nil).list(t)
	if len(page2) != 2 || page2[1]["is_removed"] != true || page2[1]["removed_date"] == nil || page2[0]["is_removed"] != false {
		t.Fatalf("second page %v", page2)
	}
	first := page1.list(t)[0]
	if d := cmp.Diff(map[string]any{"cpu": float64(4000), "memory": "8Gi"}, first["limits"]); d != "" || first["state"] != ProjectCreating {
		t.Fatalf("rendered %v (-want +got limits %s)", first, d)
	}
	w.sim.GrantRole(ids[0], w.users[0].UUID, "project_member")
	w.sim.GrantRole(ids[0], w.users[1].UUID, "project_admin")
	w.sim.GrantRole(w.resource.UUID, w.users[2].UUID, "resource_admin")
	w.sim.RevokeRole(ids[0], w.users[1].UUID, "project_admin")
	users := w.call(t, "GET", "/api/marketplace-provider-resource-projects/"+ids[0]+"/list_users/?field=user_username&field=role_name&field=user_uuid", nil).list(t)
	if d := cmp.Diff([]map[string]any{{"user_username": "alice", "role_name": "project_member", "user_uuid": w.users[0].UUID}}, users); d != "" {
		t.Fatalf("resource project users (-want +got):\n%s", d)
	}
	all := w.call(t, "GET", "/api/marketplace-provider-resources/"+w.resource.UUID+"/list_users/", nil).list(t)
	if len(all) != 1 || all[0]["user_username"] != "carol" || all[0]["role_name"] != "resource_admin" {
		t.Fatalf("resource users %v", all)
	}
	wantStatus(t, w.call(t, "GET", "/api/marketplace-provider-resource-projects/"+w.project.UUID+"/list_users/", nil), 404)
	w.sim.AssertNoViolations(t)
}

func TestResourceProjectStates(t *testing.T) {
	w := newWorld(t, Options{Version: AddendumVersion})
	rp := w.sim.AddResourceProject(ResourceProject{ResourceUUID: w.resource.UUID, Name: "web"})
	base := "/api/marketplace-provider-resource-projects/" + rp.UUID
	wantStatus(t, w.call(t, "POST", base+"/set_state_erred/", map[string]any{"error_message": "quota: denied"}), 200)
	if got, _ := w.sim.ResourceProject(rp.UUID); got.State != ProjectErred || got.ErrorMessage != "quota: denied" {
		t.Fatalf("after set_state_erred: %+v", got)
	}
	wantStatus(t, w.call(t, "POST", base+"/set_state_ok/", nil), 200)
	if got, _ := w.sim.ResourceProject(rp.UUID); got.State != ProjectOK || got.ErrorMessage != "" {
		t.Fatalf("after set_state_ok: %+v", got)
	}
	wantStatus(t, w.call(t, "POST", base+"/set_state_ok/", nil), 409)
	wantStatus(t, w.call(t, "POST", base+"/set_state_erred/", map[string]any{"error_message": "x", "traceback": "y"}), 400)
	wantStatus(t, w.call(t, "POST", "/api/marketplace-provider-resource-projects/"+w.project.UUID+"/set_state_ok/", nil), 404)
	if v := w.sim.Violations(); len(v) != 1 || !strings.Contains(v[0], "traceback") {
		t.Fatalf("violations %v", v)
	}
}

func TestMembershipSyncStatusesReport(t *testing.T) {
	w := newWorld(t, Options{Version: AddendumVersion})
	rp := w.sim.AddResourceProject(ResourceProject{ResourceUUID: w.resource.UUID, Name: "web"})
	foreign := w.sim.AddResourceProject(ResourceProject{ResourceUUID: w.sim.AddResource(Resource{Name: "B",
		OfferingUUID: offeringID, ProjectUUID: projectID}).UUID, Name: "theirs"})
	path := "/api/marketplace-provider-resources/" + w.resource.UUID + "/set_membership_sync_statuses/"
	entry := func(kv ...string) map[string]any {
		e := map[string]any{"scope_type": "resource_project", "resource_project_uuid": rp.UUID, "role_name": "project_member", "state": "synced"}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	report := map[string]any{"statuses": []any{entry("username", "alice")}}
	wantStatus(t, w.call(t, "POST", path, report), 409) // not opted in
	w.sim.SetPluginOptions(offeringID, map[string]any{"enable_membership_sync_status": true})
	r := w.call(t, "POST", path, map[string]any{"statuses": []any{
		entry("username", "alice", "state", "missing_in_idp", "message", "not in Keycloak"),
		entry("user_uuid", w.users[1].UUID),
		entry("username", "nobody"),
		entry("username", "carol", "resource_project_uuid", foreign.UUID),
		map[string]any{"scope_type": "resource", "role_name": "resource_admin", "state": "pending", "username": "carol"},
	}})
	wantStatus(t, r, 200)
	if d := cmp.Diff(map[string]any{"stored": float64(3), "skipped": []any{"nobody", "carol"}}, r.object(t)); d != "" {
		t.Fatalf("answer (-want +got):\n%s", d)
	}
	want := []MemberSyncStatus{
		{UserUUID: w.users[2].UUID, ScopeType: "resource", RoleName: "resource_admin", State: "pending"},
		{UserUUID: w.users[0].UUID, ScopeType: "resource_project", ResourceProjectUUID: rp.UUID, RoleName: "project_member", State: "missing_in_idp", Message: "not in Keycloak"},
		{UserUUID: w.users[1].UUID, ScopeType: "resource_project", ResourceProjectUUID: rp.UUID, RoleName: "project_member", State: "synced"},
	}
	if w.users[0].UUID > w.users[1].UUID {
		want[1], want[2] = want[2], want[1]
	}
	if d := cmp.Diff(want, w.sim.MembershipSyncStatuses(w.resource.UUID)); d != "" {
		t.Fatalf("stored (-want +got):\n%s", d)
	}
	wantStatus(t, w.call(t, "POST", path, map[string]any{"statuses": []any{}}), 200) // full replace
	if got := w.sim.MembershipSyncStatuses(w.resource.UUID); len(got) != 0 {
		t.Fatalf("after an empty report: %v", got)
	}
	wantStatus(t, w.call(t, "POST", path, map[string]any{"statuses": []any{entry()}}), 400)
	wantStatus(t, w.call(t, "POST", path, map[string]any{"statuses": []any{entry("username", "alice", "state", "done")}}), 400)
}
