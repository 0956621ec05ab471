package waldursim

import (
	"testing"
)

// TestEveryOperationConformsToContract drives each of the contract's operations once with a
// valid request and checks that the simulator's responses pass contract validation.
func TestEveryOperationConformsToContract(t *testing.T) {
	w := newWorld(t, Options{})
	res := "/api/marketplace-provider-resources/" + w.resource.UUID + "/"
	order := w.sim.AddOrder(Order{OfferingUUID: offeringID, ProjectUUID: projectID, PlanUUID: planID,
		Attributes: map[string]any{"name": "New One"}, Limits: map[string]float64{"cpu": 5}})
	ou := "/api/marketplace-offering-users/" + w.ous[1].UUID + "/"
	steps := []struct {
		method, path string
		body         any
		status       int
	}{
		{"GET", "/api/users/me/", nil, 200},
		{"GET", "/api/version/", nil, 200},
		{"GET", "/api/marketplace-provider-offerings/" + offeringID + "/", nil, 200},
		{"GET", "/api/marketplace-provider-offerings/" + offeringID + "/user-attribute-config/", nil, 200},
		{"POST", "/api/marketplace-provider-offerings/" + offeringID + "/create_offering_component/",
			map[string]any{"billing_type": "usage", "type": "gpu", "name": "GPU", "measured_unit": "hours"}, 201},
		{"POST", "/api/marketplace-provider-offerings/" + offeringID + "/check_unique_backend_id/",
			map[string]any{"backend_id": "alloc-1"}, 200},
		{"GET", "/api/marketplace-provider-offerings/" + offeringID + "/list_project_service_accounts/", nil, 200},
		{"GET", "/api/marketplace-provider-offerings/" + offeringID + "/list_course_accounts/", nil, 200},
		{"GET", "/api/marketplace-service-providers/?customer_uuid=" + w.offering.CustomerUUID, nil, 200},
		{"GET", "/api/marketplace-service-providers/" + w.provider.UUID + "/keys/", nil, 200},
		{"GET", "/api/marketplace-service-providers/" + w.provider.UUID + "/projects/", nil, 200},
		{"GET", "/api/marketplace-orders/?offering_uuid=" + offeringID + "&state=pending-provider", nil, 200},
		{"GET", "/api/marketplace-orders/" + order.UUID + "/", nil, 200},
		{"POST", "/api/marketplace-orders/" + order.UUID + "/approve_by_provider/", map[string]any{}, 200},
		{"POST", "/api/marketplace-orders/" + order.UUID + "/set_backend_id/", map[string]any{"backend_id": "x"}, 200},
		{"POST", "/api/marketplace-orders/" + order.UUID + "/set_state_done/", nil, 200},
		{"GET", "/api/marketplace-plans/" + planID + "/", nil, 200},
		{"GET", "/api/marketplace-provider-resources/?offering_uuid=" + offeringID + "&state=OK", nil, 200},
		{"GET", res, nil, 200},
		{"GET", res + "team/", nil, 200},
		{"POST", res + "set_backend_id/", map[string]any{"backend_id": "alloc-9"}, 200},
		{"POST", res + "set_limits/", map[string]any{"limits": map[string]any{"cpu": 20}}, 200},
		{"POST", res + "set_backend_metadata/", map[string]any{"backend_metadata": map[string]any{"k": "v"}}, 200},
		{"POST", res + "set_as_erred/", map[string]any{"error_message": "boom"}, 200},
		{"POST", res + "set_as_ok/", nil, 200},
		{"POST", res + "refresh_last_sync/", nil, 200},
		{"GET", "/api/marketplace-resources/?offering_uuid=" + offeringID, nil, 200},
		{"GET", "/api/marketplace-offering-users/?offering_uuid=" + offeringID + "&is_restricted=false", nil, 200},
		{"POST", ou + "begin_creating/", nil, 200},
		{"POST", ou + "set_pending_account_linking/", map[string]any{"comment": "link", "comment_url": "https://x.example/l"}, 200},
		{"POST", ou + "set_validation_complete/", nil, 200},
		{"PATCH", ou, map[string]any{"username": "bob01"}, 200},
		{"POST", "/api/marketplace-component-usages/set_usage/", map[string]any{
			"resource": w.resource.UUID, "date": "2025-03-01T00:00:00+00:00",
			"usages": []any{map[string]any{"type": "cpu", "amount": "12.34"}}}, 201},
		{"GET", "/api/marketplace-component-usages/?resource_uuid=" + w.resource.UUID + "&billing_period=2025-03-01", nil, 200},
		{"GET", "/api/marketplace-component-user-usages/?resource_uuid=" + w.resource.UUID, nil, 200},
		{"GET", "/api/component-user-usage-limits/?resource_uuid=" + w.resource.UUID, nil, 200},
		{"GET", "/api/marketplace-site-agent-identities/?name=agent-x", nil, 200},
		{"GET", "/api/projects/?slug=" + w.project.Slug, nil, 200},
		{"GET", "/api/backend-resources/?backend_id=b1", nil, 200},
		{"POST", "/api/backend-resources/", map[string]any{"name": "b1", "project": projectID, "offering": offeringID, "backend_id": "b1"}, 201},
	}
	for _, st := range steps {
		r := w.call(t, st.method, st.path, st.body)
		if r.status != st.status {
			t.Errorf("%s %s: status %d, want %d: %s", st.method, st.path, r.status, st.status, r.raw)
		}
	}
	w.sim.AssertNoViolations(t)
}
