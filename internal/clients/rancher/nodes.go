package rancher

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"

	"github.com/waldur/site-agent/internal/failure"
)

// Node is a v3 node (a machine registered with a cluster).
type Node struct {
	ID                string            `json:"id"`
	NodeName          string            `json:"nodeName"`
	RequestedHostname string            `json:"requestedHostname"`
	State             string            `json:"state"`
	Labels            map[string]string `json:"labels"`
	Conditions        []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"conditions"`
}

// Name is the node's name in the cluster (its requested host name until it has one).
func (n Node) Name() string {
	if n.NodeName != "" {
		return n.NodeName
	}
	return n.RequestedHostname
}

// Drained reports the Drained condition (or, without conditions, the state "drained").
func (n Node) Drained() bool {
	for _, c := range n.Conditions {
		if c.Type == "Drained" {
			return c.Status == "True"
		}
	}
	return n.State == "drained"
}

func nodePath(id string) string { return "/v3/nodes/" + url.PathEscape(id) }

// Nodes lists the cluster's nodes.
func (c *Client) Nodes(ctx context.Context, clusterID string) ([]Node, error) {
	return listAll[Node](ctx, c, "/v3/nodes", query("clusterId", clusterID))
}

// SetNodeLabels merges labels into the node's labels.
func (c *Client) SetNodeLabels(ctx context.Context, id string, labels map[string]string) error {
	var n Node
	if err := c.do(ctx, http.MethodGet, nodePath(id), nil, nil, &n); err != nil {
		return err
	}
	merged := maps.Clone(n.Labels)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, labels)
	return c.do(ctx, http.MethodPut, nodePath(id), nil, map[string]any{"labels": merged}, nil)
}

// DrainNode asks Rancher to cordon and drain the node (once) and reports whether it is
// drained.
func (c *Client) DrainNode(ctx context.Context, id string) (bool, error) {
	var n Node
	if err := c.do(ctx, http.MethodGet, nodePath(id), nil, nil, &n); err != nil {
		return false, err
	}
	if n.Drained() {
		return true, nil
	}
	if n.State == "draining" {
		return false, nil
	}
	in := map[string]any{"deleteLocalData": true, "force": true, "ignoreDaemonSets": true, "gracePeriod": -1, "timeout": 120}
	return false, c.do(ctx, http.MethodPost, nodePath(id), query("action", "drain"), in, nil)
}

// DeleteNode removes the node from Rancher; an absent one is success.
func (c *Client) DeleteNode(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, nodePath(id), nil, nil, nil)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	return err
}

// clusterBinding is a v3 clusterRoleTemplateBinding.
type clusterBinding struct {
	ID               string `json:"id"`
	GroupPrincipalID string `json:"groupPrincipalId"`
	RoleTemplateID   string `json:"roleTemplateId"`
}

// BindClusterGroup gives a group principal a role template on the cluster, once.
func (c *Client) BindClusterGroup(ctx context.Context, clusterID, principal, role string) error {
	q := query("clusterId", clusterID, "groupPrincipalId", principal, "roleTemplateId", role)
	list, err := listAll[clusterBinding](ctx, c, "/v3/clusterroletemplatebindings", q)
	if err != nil || len(list) > 0 {
		return err
	}
	return c.do(ctx, http.MethodPost, "/v3/clusterroletemplatebindings", nil, map[string]any{"type": "clusterRoleTemplateBinding",
		"clusterId": clusterID, "groupPrincipalId": principal, "roleTemplateId": role}, nil)
}

// UnbindClusterGroups removes the cluster's role template bindings of the principals.
func (c *Client) UnbindClusterGroups(ctx context.Context, clusterID string, principals []string) error {
	list, err := listAll[clusterBinding](ctx, c, "/v3/clusterroletemplatebindings", query("clusterId", clusterID))
	if err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, p := range principals {
		drop[p] = true
	}
	for _, b := range list {
		if drop[b.GroupPrincipalID] {
			err := c.do(ctx, http.MethodDelete, "/v3/clusterroletemplatebindings/"+url.PathEscape(b.ID), nil, nil, nil)
			if err != nil && !errors.Is(err, failure.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}
