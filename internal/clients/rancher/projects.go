package rancher

import (
	"context"
	"net/http"
	"net/url"
)

// Project is a v3 project (the fields site-agent uses; rancher/rancher's client module that
// declares them is not available, so they are declared here).
type Project struct {
	ID          string            `json:"id,omitempty"`
	Name        string            `json:"name,omitempty"`
	ClusterID   string            `json:"clusterId,omitempty"`
	Description string            `json:"description,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	State       string            `json:"state,omitempty"`
	Created     string            `json:"created,omitempty"`
}

// NewProject is the body of POST /v3/projects.
type NewProject struct {
	ClusterID   string
	Name        string
	Description string
	Annotations map[string]string
}

// Binding is a v3 projectRoleTemplateBinding.
type Binding struct {
	ID               string `json:"id,omitempty"`
	Name             string `json:"name,omitempty"`
	ProjectID        string `json:"projectId,omitempty"`
	RoleTemplateID   string `json:"roleTemplateId,omitempty"`
	GroupPrincipalID string `json:"groupPrincipalId,omitempty"`
	UserID           string `json:"userId,omitempty"`
	UserPrincipalID  string `json:"userPrincipalId,omitempty"`
}

// BindingFilter selects bindings by equality (the only filter v3 lists have); empty fields
// match everything.
type BindingFilter struct {
	ProjectID        string
	RoleTemplateID   string
	GroupPrincipalID string
}

func projectPath(id string) string { return "/v3/projects/" + url.PathEscape(id) }

// Projects lists the cluster's projects, only those called name unless name is "".
func (c *Client) Projects(ctx context.Context, clusterID, name string) ([]Project, error) {
	q := query("clusterId", clusterID)
	if name != "" {
		q.Set("name", name)
	}
	return listAll[Project](ctx, c, "/v3/projects", q)
}

// Project reads a project (failure.ErrNotFound when there is none).
func (c *Client) Project(ctx context.Context, id string) (Project, error) {
	var out Project
	err := c.do(ctx, http.MethodGet, projectPath(id), nil, nil, &out)
	return out, err
}

// CreateProject creates a project. A POST is retried only when it cannot have been applied:
// callers look for the project by name before they post again.
func (c *Client) CreateProject(ctx context.Context, in NewProject) (Project, error) {
	var out Project
	body := map[string]any{"type": "project", "clusterId": in.ClusterID, "name": in.Name,
		"description": in.Description, "annotations": in.Annotations}
	err := c.do(ctx, http.MethodPost, "/v3/projects", nil, body, &out)
	return out, err
}

// SetProjectAnnotations replaces the project's annotations.
func (c *Client) SetProjectAnnotations(ctx context.Context, id string, ann map[string]string) (Project, error) {
	var out Project
	err := c.do(ctx, http.MethodPut, projectPath(id), nil, map[string]any{"annotations": ann}, &out)
	return out, err
}

// DeleteProject deletes a project (failure.ErrNotFound when there is none).
func (c *Client) DeleteProject(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, projectPath(id), nil, nil, nil)
}

// Bindings lists the project role template bindings matching f (the values are sent
// URL-encoded: group principals hold ":" and "/").
func (c *Client) Bindings(ctx context.Context, f BindingFilter) ([]Binding, error) {
	q := url.Values{}
	for k, v := range map[string]string{"projectId": f.ProjectID, "roleTemplateId": f.RoleTemplateID, "groupPrincipalId": f.GroupPrincipalID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return listAll[Binding](ctx, c, "/v3/projectroletemplatebindings", q)
}

// CreateBinding gives a group principal a role template in a project (a POST: see
// CreateProject).
func (c *Client) CreateBinding(ctx context.Context, projectID, roleTemplateID, groupPrincipalID string) (Binding, error) {
	var out Binding
	body := map[string]any{"type": "projectRoleTemplateBinding", "projectId": projectID,
		"roleTemplateId": roleTemplateID, "groupPrincipalId": groupPrincipalID}
	err := c.do(ctx, http.MethodPost, "/v3/projectroletemplatebindings", nil, body, &out)
	return out, err
}

// DeleteBinding deletes a project role template binding (failure.ErrNotFound when there is
// none).
func (c *Client) DeleteBinding(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v3/projectroletemplatebindings/"+url.PathEscape(id), nil, nil, nil)
}
