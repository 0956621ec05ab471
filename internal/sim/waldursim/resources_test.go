package waldursim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResourceStateActions(t *testing.T) {
	states := []string{ResourceCreating, ResourceOK, ResourceErred, ResourceUpdating, ResourceTerminating, ResourceTerminated}
	tests := []struct {
		action string
		body   any
		legal  func(from string) bool
		want   string
	}{
		{"set_as_ok", nil, func(from string) bool { return from == ResourceErred }, ResourceOK},
		{"set_as_erred", map[string]any{"error_message": "sync failed", "error_traceback": "tb"},
			func(from string) bool { return from != ResourceTerminated }, ResourceErred},
	}
	w := newWorld(t, Options{})
	for _, tt := range tests {
		for _, from := range states {
			t.Run(tt.action+" from "+from, func(t *testing.T) {
				r := w.sim.AddResource(Resource{Name: "R", OfferingUUID: offeringID, ProjectUUID: projectID, State: from,
					ErrorMessage: "old"})
				resp := w.call(t, "POST", "/api/marketplace-provider-resources/"+r.UUID+"/"+tt.action+"/", tt.body)
				got, _ := w.sim.Resource(r.UUID)
				if !tt.legal(from) {
					wantStatus(t, resp, 409)
					if got.State != from {
						t.Errorf("state moved to %s", got.State)
					}
					return
				}
				wantStatus(t, resp, 200)
				if got.State != tt.want {
					t.Errorf("state %s, want %s", got.State, tt.want)
				}
				wantMsg := ""
				if tt.body != nil {
					wantMsg = "sync failed"
				}
				if got.ErrorMessage != wantMsg {
					t.Errorf("error_message %q, want %q", got.ErrorMessage, wantMsg)
				}
			})
		}
	}
	w.sim.AssertNoViolations(t)
}

func TestResourceSetters(t *testing.T) {
	w := newWorld(t, Options{})
	base := "/api/marketplace-provider-resources/" + w.resource.UUID + "/"
	tests := []struct {
		name, action string
		body         any
		wantStatus   int
		wantReply    string // "status" of the reply
		check        func(t *testing.T, r Resource)
	}{
		{"backend id unchanged", "set_backend_id", map[string]any{"backend_id": "alloc-1"}, 200, "Resource backend_id is not changed.", nil},
		{"backend id changed", "set_backend_id", map[string]any{"backend_id": "alloc-2"}, 200, "Resource backend_id has been changed.",
			func(t *testing.T, r Resource) {
				if r.BackendID != "alloc-2" {
					t.Errorf("backend_id %q", r.BackendID)
				}
			}},
		{"limits", "set_limits", map[string]any{"limits": map[string]any{"cpu": 50, "ram": 8}}, 200, "",
			func(t *testing.T, r Resource) {
				if diff := cmp.Diff(map[string]float64{"cpu": 50, "ram": 8}, r.Limits); diff != "" {
					t.Errorf("limits (-want +got):\n%s", diff)
				}
			}},
		{"limits not a dictionary", "set_limits", map[string]any{"limits": []any{1}}, 400, "", nil},
		{"negative limit", "set_limits", map[string]any{"limits": map[string]any{"cpu": -1}}, 400, "", nil},
		{"backend metadata", "set_backend_metadata", map[string]any{"backend_metadata": map[string]any{"state": "active"}}, 200, "",
			func(t *testing.T, r Resource) {
				if r.BackendMetadata["state"] != "active" {
					t.Errorf("metadata %v", r.BackendMetadata)
				}
			}},
		{"refresh last sync", "refresh_last_sync", nil, 200, "",
			func(t *testing.T, r Resource) {
				if !r.LastSync.Equal(testNow) {
					t.Errorf("last_sync %v", r.LastSync)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, "POST", base+tt.action+"/", tt.body)
			wantStatus(t, r, tt.wantStatus)
			if tt.wantReply != "" && r.object(t)["status"] != tt.wantReply {
				t.Errorf("reply %s", r.raw)
			}
			if tt.check != nil {
				got, _ := w.sim.Resource(w.resource.UUID)
				tt.check(t, got)
			}
		})
	}
	w.sim.AssertNoViolations(t)
}

func TestResourceTeam(t *testing.T) {
	w := newWorld(t, Options{})
	r := w.call(t, "GET", "/api/marketplace-provider-resources/"+w.resource.UUID+"/team/", nil)
	wantStatus(t, r, 200)
	if r.header.Get("X-Result-Count") != "" || r.header.Get("Link") != "" {
		t.Error("team must not be paginated")
	}
	type member struct{ Username, Role, OfferingUsername, OfferingState any }
	var got []member
	for _, m := range r.list(t) {
		got = append(got, member{m["username"], m["role"], m["offering_user_username"], m["offering_user_state"]})
	}
	want := []member{
		{"alice", "PROJECT.ADMIN", "alice01", OUOK},
		{"bob", "PROJECT.MEMBER", nil, OURequested},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("team (-want +got):\n%s", diff)
	}
	w.sim.RemoveProjectMember(projectID, w.users[0].UUID)
	if n := len(w.call(t, "GET", "/api/marketplace-provider-resources/"+w.resource.UUID+"/team/", nil).list(t)); n != 1 {
		t.Errorf("team has %d members after removal, want 1", n)
	}
	w.sim.AssertNoViolations(t)
}

func TestCheckUniqueBackendID(t *testing.T) {
	w := newWorld(t, Options{})
	other := w.sim.AddOffering(Offering{Name: "Other", CustomerUUID: w.offering.CustomerUUID})
	w.sim.AddResource(Resource{Name: "X", OfferingUUID: other.UUID, ProjectUUID: projectID, BackendID: "elsewhere"})
	tests := []struct {
		id   string
		all  bool
		want bool
	}{
		{"alloc-1", false, false},
		{"fresh", false, true},
		{"elsewhere", false, true},
		{"elsewhere", true, false},
	}
	for _, tt := range tests {
		r := w.call(t, "POST", "/api/marketplace-provider-offerings/"+offeringID+"/check_unique_backend_id/",
			map[string]any{"backend_id": tt.id, "check_all_offerings": tt.all, "use_offering_rules": false})
		wantStatus(t, r, 200)
		if got := r.object(t)["is_unique"]; got != tt.want {
			t.Errorf("%s all=%v: is_unique %v, want %v", tt.id, tt.all, got, tt.want)
		}
	}
	w.sim.AssertNoViolations(t)
}

func TestOfferingComponents(t *testing.T) {
	w := newWorld(t, Options{})
	base := "/api/marketplace-provider-offerings/" + offeringID + "/"
	wantStatus(t, w.call(t, "POST", base+"create_offering_component/",
		map[string]any{"billing_type": "usage", "type": "cpu", "name": "dup"}), 400)
	cpu := w.offering.Components[0]
	wantStatus(t, w.call(t, "POST", base+"update_offering_component/", map[string]any{
		"uuid": cpu.UUID, "billing_type": "limit", "type": "cpu", "name": "Cores", "limit_amount": 64, "limit_period": "month"}), 200)
	wantStatus(t, w.call(t, "POST", base+"update_offering_component/", map[string]any{
		"uuid": planID, "billing_type": "limit", "type": "cpu", "name": "Cores"}), 400)
	got := w.call(t, "GET", base+"?field=components", nil).object(t)
	comps, _ := got["components"].([]any)
	first, _ := comps[0].(map[string]any)
	if first["name"] != "Cores" || first["billing_type"] != "limit" || first["limit_amount"] != 64.0 || first["limit_period"] != "month" {
		t.Errorf("updated component %v", first)
	}
	stored, _ := w.sim.Offering(offeringID)
	if stored.Components[0].Name != "Cores" {
		t.Errorf("stored %+v", stored.Components[0])
	}
	w.sim.AssertNoViolations(t)
}
