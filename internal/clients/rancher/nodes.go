package rancher

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"time"

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
		Type               string `json:"type"`
		Status             string `json:"status"`
		LastTransitionTime string `json:"lastTransitionTime"`
	} `json:"conditions"`
	// Info.Kubernetes.KubeletVersion is the Node's kubelet version (rancher v2.12
	// pkg/schemas/mapper/os_info.go moves status.nodeInfo there).
	Info struct {
		Kubernetes struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"kubernetes"`
	} `json:"info"`
}

// Ready is the downstream Node's Ready condition, which Rancher copies onto the v3 node
// (rancher v2.12 pkg/controllers/managementuser/nodesyncer/nodessyncer.go cleanStatus): its
// status ("True", "False", "Unknown"; "" when Rancher shows none) and when it last changed
// (zero when absent or unreadable).
func (n Node) Ready() (status string, since time.Time) {
	for _, c := range n.Conditions {
		if c.Type == "Ready" {
			return c.Status, parseConditionTime(c.LastTransitionTime)
		}
	}
	return "", time.Time{}
}

// parseConditionTime reads a condition's time: Rancher writes metav1.Time's String() (Go's
// "2006-01-02 15:04:05 -0700 MST"); RFC 3339 is accepted too.
func parseConditionTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700 MST", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
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
