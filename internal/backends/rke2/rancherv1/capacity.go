package rancherv1

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
)

// Capacity reads the management cluster's summed node capacity.
func (c *Client) Capacity(ctx context.Context, rc rke2.RancherCluster) (rke2.Capacity, error) {
	var v3 struct {
		NodeCount int               `json:"nodeCount"`
		Capacity  map[string]string `json:"capacity"`
	}
	if err := c.do(ctx, http.MethodGet, "/v3/clusters/"+url.PathEscape(rc.ManagementID), nil, &v3); err != nil {
		return rke2.Capacity{}, err
	}
	q := func(k string) (resource.Quantity, error) {
		s, ok := v3.Capacity[k]
		if !ok {
			return resource.Quantity{}, nil
		}
		v, err := resource.ParseQuantity(s)
		if err != nil {
			return v, fmt.Errorf("cluster %s capacity %s %q: %w", rc.ManagementID, k, s, err)
		}
		return v, nil
	}
	cpu, err := q("cpu")
	if err != nil {
		return rke2.Capacity{}, err
	}
	mem, err := q("memory")
	if err != nil {
		return rke2.Capacity{}, err
	}
	disk, err := q("ephemeral-storage")
	if err != nil {
		return rke2.Capacity{}, err
	}
	return rke2.Capacity{Nodes: v3.NodeCount, CPUMillis: cpu.MilliValue(), MemoryBytes: mem.Value(), StorageBytes: disk.Value()}, nil
}

type binding struct {
	ID               string `json:"id"`
	GroupPrincipalID string `json:"groupPrincipalId"`
	RoleTemplateID   string `json:"roleTemplateId"`
}

// BindGroup gives a group principal a role template on the cluster (once).
func (c *Client) BindGroup(ctx context.Context, rc rke2.RancherCluster, principal, role string) error {
	var list collection[binding]
	q := query("clusterId", rc.ManagementID, "groupPrincipalId", principal, "roleTemplateId", role)
	if err := c.do(ctx, http.MethodGet, "/v3/clusterroletemplatebindings"+q, nil, &list); err != nil {
		return err
	}
	if len(list.Data) > 0 {
		return nil
	}
	return c.do(ctx, http.MethodPost, "/v3/clusterroletemplatebindings", map[string]any{"type": "clusterRoleTemplateBinding",
		"clusterId": rc.ManagementID, "groupPrincipalId": principal, "roleTemplateId": role}, nil)
}

// UnbindGroups removes the cluster's bindings of the principals.
func (c *Client) UnbindGroups(ctx context.Context, rc rke2.RancherCluster, principals []string) error {
	var list collection[binding]
	if err := c.do(ctx, http.MethodGet, "/v3/clusterroletemplatebindings"+query("clusterId", rc.ManagementID), nil, &list); err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, p := range principals {
		drop[p] = true
	}
	for _, b := range list.Data {
		if drop[b.GroupPrincipalID] {
			if err := c.do(ctx, http.MethodDelete, "/v3/clusterroletemplatebindings/"+url.PathEscape(b.ID), nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Diagnose checks the v3 and v1 APIs with the configured key.
func (c *Client) Diagnose(ctx context.Context) []backends.Check {
	check := func(name, path string) backends.Check {
		if err := c.do(ctx, http.MethodGet, path, nil, nil); err != nil {
			return backends.Check{Name: name, Detail: err.Error()}
		}
		return backends.Check{Name: name, OK: true, Detail: c.base + path}
	}
	return []backends.Check{check("rancher v3 api", "/v3/clusters?limit=1"), check("rancher v1 provisioning api", provPath)}
}

var _ rke2.Rancher = (*Client)(nil)
