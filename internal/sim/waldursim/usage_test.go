package waldursim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func usageBody(resource, date string, items ...map[string]any) map[string]any {
	usages := make([]any, len(items))
	for i, it := range items {
		usages[i] = it
	}
	body := map[string]any{"resource": resource, "usages": usages}
	if date != "" {
		body["date"] = date
	}
	return body
}

func TestSetUsageRules(t *testing.T) {
	cpu := func(amount string) map[string]any { return map[string]any{"type": "cpu", "amount": amount} }
	ram := func(amount string) map[string]any { return map[string]any{"type": "ram", "amount": amount} }
	tests := []struct {
		name       string
		staff      bool
		state      string // resource state ("" = OK)
		noPlan     bool
		date       string
		items      []map[string]any
		wantStatus int
		wantBody   string // substring of the error body
		wantPeriod string // billing period stored
	}{
		{name: "current period", date: "2025-03-01T00:00:00+00:00", items: []map[string]any{cpu("12.34")}, wantStatus: 201, wantPeriod: "2025-03-01"},
		{name: "no date means now", items: []map[string]any{cpu("1")}, wantStatus: 201, wantPeriod: "2025-03-01"},
		{name: "offset moves the period", date: "2025-03-01T01:00:00+02:00", items: []map[string]any{ram("1")}, wantStatus: 201, wantPeriod: "2025-02-01"},
		{name: "past period by non-staff", date: "2025-02-01T00:00:00+00:00", items: []map[string]any{cpu("5")},
			wantStatus: 400, wantBody: "backfilling past billing periods"},
		{name: "past period by staff", staff: true, date: "2025-02-01T00:00:00+00:00", items: []map[string]any{cpu("5")},
			wantStatus: 201, wantPeriod: "2025-02-01"},
		{name: "past period of a limit component", date: "2025-01-01T00:00:00Z", items: []map[string]any{ram("5")},
			wantStatus: 201, wantPeriod: "2025-01-01"},
		{name: "future date", staff: true, date: "2025-04-01T00:00:00Z", items: []map[string]any{cpu("5")},
			wantStatus: 400, wantBody: "future"},
		{name: "unknown component", items: []map[string]any{cpu("1"), {"type": "gpu", "amount": "1"}}, wantStatus: 400, wantBody: "gpu"},
		{name: "creating resource", state: ResourceCreating, items: []map[string]any{cpu("1")}, wantStatus: 400, wantBody: "Creating"},
		{name: "terminated resource", state: ResourceTerminated, items: []map[string]any{cpu("1")}, wantStatus: 400},
		{name: "terminating resource", state: ResourceTerminating, items: []map[string]any{cpu("1")}, wantStatus: 201, wantPeriod: "2025-03-01"},
		{name: "erred resource", state: ResourceErred, items: []map[string]any{cpu("1")}, wantStatus: 201, wantPeriod: "2025-03-01"},
		{name: "resource without plan", noPlan: true, items: []map[string]any{cpu("1")}, wantStatus: 400, wantBody: "plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, Options{Staff: tt.staff})
			seed := Resource{Name: "U", OfferingUUID: offeringID, ProjectUUID: projectID, PlanUUID: planID, State: tt.state}
			if tt.noPlan {
				seed.PlanUUID = ""
			}
			r := w.sim.AddResource(seed)
			resp := w.call(t, "POST", "/api/marketplace-component-usages/set_usage/", usageBody(r.UUID, tt.date, tt.items...))
			wantStatus(t, resp, tt.wantStatus)
			if !strings.Contains(string(resp.raw), tt.wantBody) {
				t.Errorf("body %s does not contain %q", resp.raw, tt.wantBody)
			}
			usages := w.sim.ComponentUsages(r.UUID)
			if tt.wantStatus != 201 {
				if len(usages) != 0 {
					t.Errorf("a rejected report stored %d usages", len(usages))
				}
			} else if len(usages) != len(tt.items) || usages[0].BillingPeriod != tt.wantPeriod {
				t.Errorf("usages %+v, want %d in %s", usages, len(tt.items), tt.wantPeriod)
			}
			w.sim.AssertNoViolations(t)
		})
	}
}

func TestSetUsageUpdatesSamePeriodAndLists(t *testing.T) {
	w := newWorld(t, Options{})
	res := w.resource.UUID
	post := func(amount string) {
		wantStatus(t, w.call(t, "POST", "/api/marketplace-component-usages/set_usage/",
			usageBody(res, "2025-03-01T00:00:00+00:00", map[string]any{"type": "cpu", "amount": amount})), 201)
	}
	post("10.00")
	post("12.50")
	usages := w.sim.ComponentUsages(res)
	if len(usages) != 1 || usages[0].Amount != 12.5 {
		t.Fatalf("usages %+v, want one record of 12.5", usages)
	}
	got := w.call(t, "GET", "/api/marketplace-component-usages/?resource_uuid="+res+"&billing_period=2025-03-01&field=uuid&field=type&field=usage", nil).list(t)
	want := []map[string]any{{"uuid": usages[0].UUID, "type": "cpu", "usage": "12.50"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	other := w.call(t, "GET", "/api/marketplace-component-usages/?resource_uuid="+res+"&billing_period=2025-02-01", nil).list(t)
	if len(other) != 0 {
		t.Errorf("February listing has %d records", len(other))
	}
	resource := w.call(t, "GET", "/api/marketplace-provider-resources/"+res+"/?field=current_usages", nil).object(t)
	if diff := cmp.Diff(map[string]any{"current_usages": map[string]any{"cpu": 12.5}}, resource); diff != "" {
		t.Errorf("current usages (-want +got):\n%s", diff)
	}
	w.sim.AssertNoViolations(t)
}

func TestUserUsages(t *testing.T) {
	w := newWorld(t, Options{})
	cu := w.sim.AddComponentUsage(ComponentUsage{ResourceUUID: w.resource.UUID, Type: "cpu", Amount: 30, Date: testNow})
	aliceURL := w.srv.URL + "/api/marketplace-offering-users/" + w.ous[0].UUID + "/"
	bulk := map[string]any{"usages": []any{
		map[string]any{"username": "alice01", "usage": "10.00", "date": "2025-03-01T00:00:00+00:00", "user": aliceURL},
		map[string]any{"username": "ghost", "usage": "5.00"},
	}}
	base := "/api/marketplace-component-usages/" + cu.UUID + "/"
	wantStatus(t, w.call(t, "POST", base+"set_user_usages/", bulk), 201)
	wantStatus(t, w.call(t, "POST", base+"set_user_usage/", map[string]any{"username": "ghost", "usage": "7.25"}), 201)

	stored := w.sim.ComponentUsages(w.resource.UUID)[0].UserUsages
	got := map[string]float64{}
	for _, uu := range stored {
		got[uu.Username] = uu.Usage
	}
	if diff := cmp.Diff(map[string]float64{"alice01": 10, "ghost": 7.25}, got); diff != "" {
		t.Errorf("user usages (-want +got):\n%s", diff)
	}
	list := w.call(t, "GET", "/api/marketplace-component-user-usages/?resource_uuid="+w.resource.UUID+
		"&component_usage__billing_period=2025-03-01&field=component_usage&field=username&field=usage&field=user", nil).list(t)
	if len(list) != 2 || list[0]["component_usage"] != w.srv.URL+base || list[0]["user"] != aliceURL || list[1]["user"] != nil {
		t.Errorf("listing %v", list)
	}

	errorsTests := []struct {
		name string
		body map[string]any
		want int
		sub  string
	}{
		{"unknown offering user URL", map[string]any{"username": "x", "usage": "1", "user": w.srv.URL + "/api/marketplace-offering-users/" + planID + "/"}, 400, "Invalid hyperlink"},
		{"past period by non-staff", map[string]any{"username": "x", "usage": "1", "date": "2025-01-05T00:00:00Z"}, 400, "backfilling past billing periods"},
	}
	for _, tt := range errorsTests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, "POST", base+"set_user_usage/", tt.body)
			wantStatus(t, r, tt.want)
			if !strings.Contains(string(r.raw), tt.sub) {
				t.Errorf("body %s", r.raw)
			}
		})
	}
	wantStatus(t, w.call(t, "POST", "/api/marketplace-component-usages/"+planID+"/set_user_usage/", map[string]any{"username": "x"}), 404)
	w.sim.AssertNoViolations(t)
}

func TestStaffUserUsageInPastPeriodCreatesThatPeriod(t *testing.T) {
	w := newWorld(t, Options{Staff: true})
	cu := w.sim.AddComponentUsage(ComponentUsage{ResourceUUID: w.resource.UUID, Type: "cpu", Amount: 30, Date: testNow})
	wantStatus(t, w.call(t, "POST", "/api/marketplace-component-usages/"+cu.UUID+"/set_user_usage/",
		map[string]any{"username": "alice01", "usage": "3", "date": "2025-01-15T00:00:00Z"}), 201)
	usages := w.sim.ComponentUsages(w.resource.UUID)
	if len(usages) != 2 || usages[1].BillingPeriod != "2025-01-01" || len(usages[1].UserUsages) != 1 || len(usages[0].UserUsages) != 0 {
		t.Errorf("usages %+v", usages)
	}
	w.sim.AssertNoViolations(t)
}

func TestUserUsageLimits(t *testing.T) {
	w := newWorld(t, Options{})
	w.sim.AddUserUsageLimit(UserUsageLimit{ResourceUUID: w.resource.UUID, OfferingUserUUID: w.ous[0].UUID, ComponentType: "cpu", Limit: 15})
	cu := w.sim.AddComponentUsage(ComponentUsage{ResourceUUID: w.resource.UUID, Type: "cpu", Amount: 30})
	list := w.call(t, "GET", "/api/component-user-usage-limits/?resource_uuid="+w.resource.UUID, nil).list(t)
	if len(list) != 1 || list[0]["limit"] != "15.00" || list[0]["component_type"] != "cpu" ||
		list[0]["user"] != w.srv.URL+"/api/marketplace-offering-users/"+w.ous[0].UUID+"/" {
		t.Errorf("limits %v", list)
	}
	over := map[string]any{"username": "alice01", "usage": "20", "user": w.srv.URL + "/api/marketplace-offering-users/" + w.ous[0].UUID + "/"}
	r := w.call(t, "POST", "/api/marketplace-component-usages/"+cu.UUID+"/set_user_usage/", over)
	wantStatus(t, r, 400)
	if !strings.Contains(string(r.raw), "Usage limit exceeded") {
		t.Errorf("body %s", r.raw)
	}
	w.sim.AssertNoViolations(t)
}
