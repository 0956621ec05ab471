package waldursim

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestEverySelectableFieldIsRendered requests, one at a time, every value the contract allows
// for field= on every operation that declares it: each must be rendered with a conforming
// value, except the documented unmodelled ones, which are refused up front.
func TestEverySelectableFieldIsRendered(t *testing.T) {
	w := newWorld(t, Options{Version: AddendumVersion})
	o := w.sim.AddOrder(Order{OfferingUUID: offeringID, ProjectUUID: projectID, PlanUUID: planID, ResourceName: "x"})
	w.sim.AddComponentUsage(ComponentUsage{ResourceUUID: w.resource.UUID, Type: "cpu", Amount: 1,
		UserUsages: []UserUsage{{Username: "a", Usage: 1}}})
	w.sim.AddSSHKey(SSHKey{UserUUID: w.users[0].UUID, Name: "k", PublicKey: "ssh-rsa AAAA"})
	paths := map[string]string{
		"users_me_retrieve":                                      "/api/users/me/",
		"marketplace_provider_offerings_retrieve":                "/api/marketplace-provider-offerings/" + offeringID + "/",
		"marketplace_service_providers_list":                     "/api/marketplace-service-providers/",
		"marketplace_service_providers_keys_list":                "/api/marketplace-service-providers/" + w.provider.UUID + "/keys/",
		"marketplace_service_providers_projects_list":            "/api/marketplace-service-providers/" + w.provider.UUID + "/projects/",
		"marketplace_orders_list":                                "/api/marketplace-orders/",
		"marketplace_orders_retrieve":                            "/api/marketplace-orders/" + o.UUID + "/",
		"marketplace_provider_resources_list":                    "/api/marketplace-provider-resources/",
		"marketplace_provider_resources_retrieve":                "/api/marketplace-provider-resources/" + w.resource.UUID + "/",
		"marketplace_resources_list":                             "/api/marketplace-resources/",
		"marketplace_offering_users_list":                        "/api/marketplace-offering-users/",
		"marketplace_component_usages_list":                      "/api/marketplace-component-usages/",
		"marketplace_component_user_usages_list":                 "/api/marketplace-component-user-usages/",
		"projects_list":                                          "/api/projects/",
		"marketplace_provider_resource_projects_list_users_list": "/api/marketplace-provider-resource-projects/" + w.grantedProject().UUID + "/list_users/",
		"marketplace_provider_resources_list_users_list":         "/api/marketplace-provider-resources/" + w.resource.UUID + "/list_users/",
	}
	requests := 0
	for _, id := range w.sim.c.operationIDs() {
		param, ok := w.sim.c.ops[id].Query["field"]
		if !ok {
			continue
		}
		path, ok := paths[id]
		if !ok {
			t.Errorf("no path to exercise %s", id)
			continue
		}
		for _, e := range param.Schema.Value.Items.Value.Enum {
			field := e.(string)
			r := w.call(t, "GET", path+"?"+url.Values{"field": {field}}.Encode(), nil)
			requests++
			want := 200
			if slices.Contains(endpoints[id].unmodelled, field) {
				want = 400
			}
			if r.status != want {
				t.Errorf("%s field=%s: status %d, want %d", id, field, r.status, want)
			}
		}
	}
	unmodelled := 0
	for _, v := range w.sim.Violations() {
		if strings.Contains(v, "is not modelled by the simulator") {
			unmodelled++
			continue
		}
		t.Errorf("violation: %s", v)
	}
	if unmodelled != 3*len(resourceUnmodelled) {
		t.Errorf("%d unmodelled-field refusals, want %d", unmodelled, 3*len(resourceUnmodelled))
	}
	t.Logf("%d field selections checked", requests)
}

// grantedProject adds a resource project with one grant, and a grant on the resource.
func (w *world) grantedProject() ResourceProject {
	rp := w.sim.AddResourceProject(ResourceProject{ResourceUUID: w.resource.UUID, Name: "web"})
	w.sim.GrantRole(rp.UUID, w.users[0].UUID, "project_member")
	w.sim.GrantRole(w.resource.UUID, w.users[1].UUID, "resource_admin")
	return rp
}
