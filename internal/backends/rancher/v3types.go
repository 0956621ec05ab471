package rancher

import (
	"context"
	"net/http"

	"github.com/rancher/norman/clientbase"
	"github.com/rancher/norman/types"
)

// Project is a Rancher v3 project (the fields the backend uses; the rancher/rancher client
// module that declares them is not available, so they are declared here).
type Project struct {
	types.Resource
	Name        string            `json:"name,omitempty"`
	ClusterID   string            `json:"clusterId,omitempty"`
	Description string            `json:"description,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	State       string            `json:"state,omitempty"`
	Created     string            `json:"created,omitempty"`
}

// projectInput is the body of POST /v3/projects.
type projectInput struct {
	Type        string            `json:"type"`
	ClusterID   string            `json:"clusterId"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Annotations map[string]string `json:"annotations"`
}

// Binding is a Rancher v3 projectRoleTemplateBinding.
type Binding struct {
	types.Resource
	Name             string `json:"name,omitempty"`
	ProjectID        string `json:"projectId,omitempty"`
	RoleTemplateID   string `json:"roleTemplateId,omitempty"`
	GroupPrincipalID string `json:"groupPrincipalId,omitempty"`
	UserID           string `json:"userId,omitempty"`
	UserPrincipalID  string `json:"userPrincipalId,omitempty"`
}

// bindingInput is the body of POST /v3/projectroletemplatebindings.
type bindingInput struct {
	Type             string `json:"type"`
	ProjectID        string `json:"projectId"`
	RoleTemplateID   string `json:"roleTemplateId"`
	GroupPrincipalID string `json:"groupPrincipalId"`
}

// Cluster is a Rancher v3 cluster.
type Cluster struct {
	types.Resource
	Name  string `json:"name,omitempty"`
	State string `json:"state,omitempty"`
}

// Token is a Rancher v3 API token (looked up by its access key for diagnostics).
type Token struct {
	types.Resource
	Name      string `json:"name,omitempty"`
	Enabled   *bool  `json:"enabled,omitempty"`
	Expired   bool   `json:"expired,omitempty"`
	ExpiresAt string `json:"expiresAt,omitempty"`
}

func (c *v3Client) Cluster(ctx context.Context, id string) (Cluster, error) {
	var out Cluster
	err := c.call(ctx, http.MethodGet, "/v3/clusters/"+id, func(o *clientbase.APIOperations) error {
		return o.DoByID(schemaCluster, id, &out)
	})
	return out, err
}

func (c *v3Client) Token(ctx context.Context, name string) (Token, error) {
	var out Token
	err := c.call(ctx, http.MethodGet, "/v3/tokens/"+name, func(o *clientbase.APIOperations) error {
		return o.DoByID(schemaToken, name, &out)
	})
	return out, err
}

// Projects lists the cluster's projects, optionally only those with a given name.
func (c *v3Client) Projects(ctx context.Context, clusterID, name string) ([]Project, error) {
	f := map[string]any{"clusterId": clusterID}
	if name != "" {
		f["name"] = name
	}
	return listAll[Project](ctx, c, schemaProject, f)
}

func (c *v3Client) Project(ctx context.Context, id string) (Project, error) {
	var out Project
	err := c.call(ctx, http.MethodGet, "/v3/projects/"+id, func(o *clientbase.APIOperations) error {
		return o.DoByID(schemaProject, id, &out)
	})
	return out, err
}

func (c *v3Client) CreateProject(ctx context.Context, in projectInput) (Project, error) {
	in.Type = schemaProject
	var out Project
	err := c.call(ctx, http.MethodPost, "/v3/projects", func(o *clientbase.APIOperations) error {
		return o.DoCreate(schemaProject, in, &out)
	})
	return out, err
}

// SetProjectAnnotations replaces the project's annotations.
func (c *v3Client) SetProjectAnnotations(ctx context.Context, p Project, ann map[string]string) (Project, error) {
	var out Project
	err := c.call(ctx, http.MethodPut, "/v3/projects/"+p.ID, func(o *clientbase.APIOperations) error {
		return o.DoUpdate(schemaProject, &p.Resource, map[string]any{"annotations": ann}, &out)
	})
	return out, err
}

func (c *v3Client) DeleteProject(ctx context.Context, p Project) error {
	return c.call(ctx, http.MethodDelete, "/v3/projects/"+p.ID, func(o *clientbase.APIOperations) error {
		return o.DoResourceDelete(schemaProject, &p.Resource)
	})
}

// Bindings lists project role template bindings matching the filters (roleTemplateId,
// projectId, groupPrincipalId), sent URL-encoded.
func (c *v3Client) Bindings(ctx context.Context, filters map[string]any) ([]Binding, error) {
	return listAll[Binding](ctx, c, schemaBinding, filters)
}

func (c *v3Client) CreateBinding(ctx context.Context, in bindingInput) (Binding, error) {
	in.Type = schemaBinding
	var out Binding
	err := c.call(ctx, http.MethodPost, "/v3/projectroletemplatebindings", func(o *clientbase.APIOperations) error {
		return o.DoCreate(schemaBinding, in, &out)
	})
	return out, err
}

func (c *v3Client) DeleteBinding(ctx context.Context, b Binding) error {
	return c.call(ctx, http.MethodDelete, "/v3/projectroletemplatebindings/"+b.ID, func(o *clientbase.APIOperations) error {
		return o.DoResourceDelete(schemaBinding, &b.Resource)
	})
}
