package waldurclient

import (
	"context"
	"net/http"
	"net/url"
)

// First Waldur releases serving the calls of this file (the simulator's contract addendum
// documents them with their sources).
const (
	// ResourceProjectsSince serves the resource-project calls and a resource's list_users.
	ResourceProjectsSince = "8.0.8"
	// MembershipSyncStatusesSince serves set_membership_sync_statuses.
	MembershipSyncStatusesSince = "8.1.0"
)

// Resource-project states (Mastermind's ResourceProject uses the resource state names).
const (
	ProjectCreating = "Creating"
	ProjectOK       = "OK"
	ProjectErred    = "Erred"
	ProjectUpdating = "Updating"
)

// ResourceProject is a sub-project of a resource (Waldur 8.0.8 and later).
type ResourceProject struct {
	UUID         string         `json:"uuid"`
	ResourceUUID string         `json:"resource_uuid"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	State        string         `json:"state"`
	ErrorMessage string         `json:"error_message"`
	Limits       map[string]any `json:"limits"`
	IsRemoved    bool           `json:"is_removed"`
}

// UserRole is one user's role in a resource or a resource project (UserRoleDetails).
type UserRole struct {
	RoleName     string `json:"role_name"`
	UserUUID     string `json:"user_uuid"`
	UserUsername string `json:"user_username"`
}

// userRoleFields is the sparse fieldset of list_users.
var userRoleFields = []string{"role_name", "user_uuid", "user_username"}

// MemberSyncStatus is one entry of a membership sync report: how one grant reached the
// provider's identity provider. Exactly one of Username and UserUUID names the user;
// ResourceProjectUUID is set for the resource_project scope only.
type MemberSyncStatus struct {
	Username            string `json:"username,omitempty"`
	UserUUID            string `json:"user_uuid,omitempty"`
	ScopeType           string `json:"scope_type"`
	ResourceProjectUUID string `json:"resource_project_uuid,omitempty"`
	RoleName            string `json:"role_name"`
	State               string `json:"state"`
	Message             string `json:"message"`
}

// SyncStatusResult is Waldur's answer to a report: rows stored, entries it could not resolve.
type SyncStatusResult struct {
	Stored  int      `json:"stored"`
	Skipped []string `json:"skipped"`
}

// ListResourceProjects lists the resource projects of a resource, all pages.
func (c *Client) ListResourceProjects(ctx context.Context, resourceUUID string) ([]ResourceProject, error) {
	q := url.Values{"resource_uuid": {resourceUUID}}
	return listAll[ResourceProject](ctx, c, "/api/marketplace-provider-resource-projects/", "", q)
}

// ResourceProjectUsers lists the role grants of a resource project, all pages.
func (c *Client) ResourceProjectUsers(ctx context.Context, uuid string) ([]UserRole, error) {
	return listAll[UserRole](ctx, c, "/api/marketplace-provider-resource-projects/{uuid}/list_users/", uuid, fields(userRoleFields...))
}

// ResourceUsers lists the role grants of a resource itself, all pages.
func (c *Client) ResourceUsers(ctx context.Context, resourceUUID string) ([]UserRole, error) {
	return listAll[UserRole](ctx, c, "/api/marketplace-provider-resources/{uuid}/list_users/", resourceUUID, fields(userRoleFields...))
}

// SetResourceProjectOK moves a resource project to OK.
func (c *Client) SetResourceProjectOK(ctx context.Context, uuid string) error {
	return c.post(ctx, "/api/marketplace-provider-resource-projects/{uuid}/set_state_ok/", uuid, nil)
}

// SetResourceProjectErred moves a resource project to Erred with a message.
func (c *Client) SetResourceProjectErred(ctx context.Context, uuid, message string) error {
	return c.post(ctx, "/api/marketplace-provider-resource-projects/{uuid}/set_state_erred/", uuid,
		map[string]string{"error_message": message})
}

// SetMembershipSyncStatuses replaces the resource's stored membership sync statuses. Waldur
// answers 409 when the offering has not opted in (plugin option enable_membership_sync_status).
func (c *Client) SetMembershipSyncStatuses(ctx context.Context, resourceUUID string, statuses []MemberSyncStatus) (SyncStatusResult, error) {
	if statuses == nil {
		statuses = []MemberSyncStatus{}
	}
	var out SyncStatusResult
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-provider-resources/{uuid}/set_membership_sync_statuses/",
		id: resourceUUID, body: map[string]any{"statuses": statuses}}, &out)
	return out, err
}
