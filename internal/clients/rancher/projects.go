package rancher

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/waldur/site-agent/internal/failure"
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
	// Removed is set while Rancher deletes the project (its deletionTimestamp, state
	// "removing"): v2.12.0 keeps it readable until its controllers have run.
	Removed string `json:"removed,omitempty"`
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
	// Removed is set while Rancher deletes the binding (norman's rendering of its
	// deletionTimestamp): v2.12.0 keeps listing a deleted binding until its controllers have
	// run its finalizers.
	Removed string `json:"removed,omitempty"`
}

// BindingFilter selects bindings by equality (the only filter v3 lists have); empty fields
// match everything.
type BindingFilter struct {
	ProjectID        string
	RoleTemplateID   string
	GroupPrincipalID string
}

func projectPath(id string) string { return "/v3/projects/" + url.PathEscape(id) }

// Projects lists the cluster's projects, only those called name unless name is "". Projects
// being deleted are left out (see Project).
func (c *Client) Projects(ctx context.Context, clusterID, name string) ([]Project, error) {
	q := query("clusterId", clusterID)
	if name != "" {
		q.Set("name", name)
	}
	list, err := listAll[Project](ctx, c, "/v3/projects", q)
	return slices.DeleteFunc(list, func(p Project) bool { return p.Removed != "" }), err
}

// Project reads a project: failure.ErrNotFound when there is none, or when Rancher is deleting
// it — v2.12.0 answers a deleted project, as "removing", until the controllers behind its
// finalizers have run (seconds when it has namespaces), and a project on its way out is gone
// for every purpose of the client's callers.
func (c *Client) Project(ctx context.Context, id string) (Project, error) {
	var out Project
	if err := c.do(ctx, http.MethodGet, projectPath(id), nil, nil, &out); err != nil {
		return out, err
	}
	if out.Removed != "" {
		return Project{}, fmt.Errorf("rancher project %s is being deleted (since %s): %w", id, out.Removed, failure.ErrNotFound)
	}
	return out, nil
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
// URL-encoded: group principals hold ":" and "/"). Bindings being deleted are left out: Rancher
// lists a deleted binding, with `removed` set, until its controllers have run the binding's
// finalizers (v2.12.0: pkg/controllers/management/auth/register.go puts the
// mgmt-auth-prtb-controller lifecycle on every binding), and a binding on its way out neither
// grants anything nor keeps a group in use.
func (c *Client) Bindings(ctx context.Context, f BindingFilter) ([]Binding, error) {
	q := url.Values{}
	for k, v := range map[string]string{"projectId": f.ProjectID, "roleTemplateId": f.RoleTemplateID, "groupPrincipalId": f.GroupPrincipalID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	list, err := listAll[Binding](ctx, c, "/v3/projectroletemplatebindings", q)
	return slices.DeleteFunc(list, func(b Binding) bool { return b.Removed != "" }), err
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
