package waldurclient

import (
	"context"
	"net/http"
)

// ResourceFields is the sparse fieldset used when listing resources for membership and report.
var ResourceFields = []string{
	"uuid", "name", "slug", "backend_id", "state", "offering_uuid", "plan_uuid",
	"project_uuid", "project_slug", "project_name", "customer_uuid", "customer_slug", "customer_name",
	"limits", "attributes", "backend_metadata", "paused", "downscaled", "restrict_member_access", "last_sync",
}

// ListResources lists the offering's provider resources in the given states, all pages.
func (c *Client) ListResources(ctx context.Context, offeringUUID string, states ...string) ([]Resource, error) {
	q := fields(ResourceFields...)
	q.Set("offering_uuid", offeringUUID)
	q["state"] = states
	return listAll[Resource](ctx, c, "/api/marketplace-provider-resources/", "", q)
}

// ListProjectResources lists the offering's provider resources of one project, all pages.
func (c *Client) ListProjectResources(ctx context.Context, offeringUUID, projectUUID string, states ...string) ([]Resource, error) {
	q := fields(ResourceFields...)
	q.Set("offering_uuid", offeringUUID)
	q.Set("project_uuid", projectUUID)
	q["state"] = states
	return listAll[Resource](ctx, c, "/api/marketplace-provider-resources/", "", q)
}

// GetResource fetches one provider resource (the fields the agent uses).
func (c *Client) GetResource(ctx context.Context, uuid string) (Resource, error) {
	var r Resource
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-provider-resources/{uuid}/", id: uuid,
		query: fields(ResourceFields...)}, &r)
	return r, err
}

// Team lists the users with a role in the resource's project.
func (c *Client) Team(ctx context.Context, resourceUUID string) ([]TeamMember, error) {
	var team []TeamMember
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-provider-resources/{uuid}/team/", id: resourceUUID}, &team)
	return team, err
}

// SetResourceBackendID records the backend identifier of a resource.
func (c *Client) SetResourceBackendID(ctx context.Context, uuid, backendID string) error {
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/set_backend_id/", uuid, map[string]string{"backend_id": backendID})
}

// SetResourceLimits records the limits the backend enforces (Waldur units, whole numbers).
func (c *Client) SetResourceLimits(ctx context.Context, uuid string, limits map[string]float64) error {
	ints := make(map[string]int64, len(limits))
	for k, v := range limits {
		ints[k] = int64(v)
	}
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/set_limits/", uuid, map[string]any{"limits": ints})
}

// SetResourceMetadata records backend facts on the resource.
func (c *Client) SetResourceMetadata(ctx context.Context, uuid string, md map[string]any) error {
	if md == nil {
		md = map[string]any{}
	}
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/set_backend_metadata/", uuid, map[string]any{"backend_metadata": md})
}

// SetResourceErred marks a resource erred with a message.
func (c *Client) SetResourceErred(ctx context.Context, uuid, message, traceback string) error {
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/set_as_erred/", uuid,
		map[string]string{"error_message": message, "error_traceback": traceback})
}

// SetResourceOK moves an erred resource back to OK.
func (c *Client) SetResourceOK(ctx context.Context, uuid string) error {
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/set_as_ok/", uuid, nil)
}

// RefreshLastSync stamps the resource as synchronised now.
func (c *Client) RefreshLastSync(ctx context.Context, uuid string) error {
	return c.post(ctx, "/api/marketplace-provider-resources/{uuid}/refresh_last_sync/", uuid, nil)
}

// OfferingUserFields is the sparse fieldset for offering users.
var OfferingUserFields = []string{"uuid", "url", "user_uuid", "username", "state", "user_username", "user_email", "user_full_name"}

// ListOfferingUsers lists the offering's non-restricted offering users, all pages.
func (c *Client) ListOfferingUsers(ctx context.Context, offeringUUID string) ([]OfferingUser, error) {
	q := fields(OfferingUserFields...)
	q.Set("offering_uuid", offeringUUID)
	q.Set("is_restricted", "false")
	return listAll[OfferingUser](ctx, c, "/api/marketplace-offering-users/", "", q)
}

// GetPlan fetches a plan (its quotas are default limits).
func (c *Client) GetPlan(ctx context.Context, uuid string) (Plan, error) {
	var p Plan
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-plans/{uuid}/", id: uuid}, &p)
	return p, err
}

// CheckUniqueBackendID asks Waldur whether a backend id is free in the offering (or all).
func (c *Client) CheckUniqueBackendID(ctx context.Context, offeringUUID, backendID string, allOfferings bool) (bool, error) {
	var out struct {
		IsUnique bool `json:"is_unique"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-provider-offerings/{uuid}/check_unique_backend_id/",
		id: offeringUUID, body: map[string]any{"backend_id": backendID, "check_all_offerings": allOfferings}}, &out)
	if c.dryRun {
		return true, err
	}
	return out.IsUnique, err
}

// Account is a project service account or course account (the agent never reads their tokens).
type Account struct {
	UUID        string `json:"uuid"`
	ProjectUUID string `json:"project_uuid"`
	Username    string `json:"username"`
	State       string `json:"state"`
	Email       string `json:"email"`
}

// ListServiceAccounts lists the project service accounts of the offering's projects, all pages.
func (c *Client) ListServiceAccounts(ctx context.Context, offeringUUID string) ([]Account, error) {
	return listAll[Account](ctx, c, "/api/marketplace-provider-offerings/{uuid}/list_project_service_accounts/", offeringUUID, nil)
}

// ListCourseAccounts lists the course accounts of the offering's projects, all pages.
func (c *Client) ListCourseAccounts(ctx context.Context, offeringUUID string) ([]Account, error) {
	return listAll[Account](ctx, c, "/api/marketplace-provider-offerings/{uuid}/list_course_accounts/", offeringUUID, nil)
}
