package rancherv1

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

type crt struct {
	ID          string `json:"id"`
	Token       string `json:"token"`
	ManifestURL string `json:"manifestUrl"`
}

// Registration returns the cluster's registration token and import manifest URL, creating a
// registration token if there is none.
func (c *Client) Registration(ctx context.Context, rc rke2.RancherCluster) (rke2.Registration, error) {
	if rc.ManagementID == "" {
		return rke2.Registration{}, fmt.Errorf("cluster %s has no management id yet: %w", rc.Name, failure.ErrNotReady)
	}
	find := func() (crt, error) {
		var list collection[crt]
		if err := c.do(ctx, http.MethodGet, "/v3/clusterregistrationtokens"+query("clusterId", rc.ManagementID), nil, &list); err != nil {
			return crt{}, err
		}
		for _, t := range list.Data {
			if t.Token != "" {
				return t, nil
			}
		}
		return crt{}, nil
	}
	tok, err := find()
	if err == nil && tok.Token == "" {
		err = c.do(ctx, http.MethodPost, "/v3/clusterregistrationtokens",
			map[string]any{"type": "clusterRegistrationToken", "clusterId": rc.ManagementID}, &tok)
	}
	if err != nil {
		return rke2.Registration{}, fmt.Errorf("registration token of %s: %w", rc.Name, err)
	}
	if tok.Token == "" {
		return rke2.Registration{}, fmt.Errorf("cluster %s has no registration token yet: %w", rc.Name, failure.ErrNotReady)
	}
	return rke2.Registration{Token: secret.New(tok.Token), ManifestURL: secret.New(tok.ManifestURL)}, nil
}

type node struct {
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

func (n node) name() string {
	if n.NodeName != "" {
		return n.NodeName
	}
	return n.RequestedHostname
}

func (n node) drained() bool {
	for _, c := range n.Conditions {
		if c.Type == "Drained" {
			return c.Status == "True"
		}
	}
	return n.State == "drained"
}

// Nodes lists the cluster's nodes.
func (c *Client) Nodes(ctx context.Context, rc rke2.RancherCluster) ([]rke2.RancherNodeView, error) {
	if rc.ManagementID == "" {
		return nil, nil
	}
	var list collection[node]
	if err := c.do(ctx, http.MethodGet, "/v3/nodes"+query("clusterId", rc.ManagementID, "limit", "-1"), nil, &list); err != nil {
		return nil, err
	}
	out := make([]rke2.RancherNodeView, 0, len(list.Data))
	for _, n := range list.Data {
		out = append(out, rke2.RancherNodeView{ID: n.ID, Name: n.name(), State: n.State, Labels: n.Labels})
	}
	return out, nil
}

func nodePath(id string) string { return "/v3/nodes/" + url.PathEscape(id) }

// SetNodeLabels merges labels into the node's labels.
func (c *Client) SetNodeLabels(ctx context.Context, _ rke2.RancherCluster, id string, labels map[string]string) error {
	var n node
	if err := c.do(ctx, http.MethodGet, nodePath(id), nil, &n); err != nil {
		return err
	}
	merged := maps.Clone(n.Labels)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, labels)
	return c.do(ctx, http.MethodPut, nodePath(id), map[string]any{"labels": merged}, nil)
}

// Drain asks Rancher to cordon and drain the node (once) and reports whether it is drained.
func (c *Client) Drain(ctx context.Context, _ rke2.RancherCluster, id string) (bool, error) {
	var n node
	if err := c.do(ctx, http.MethodGet, nodePath(id), nil, &n); err != nil {
		return false, err
	}
	if n.drained() {
		return true, nil
	}
	if n.State == "draining" {
		return false, nil
	}
	in := map[string]any{"deleteLocalData": true, "force": true, "ignoreDaemonSets": true, "gracePeriod": -1, "timeout": 120}
	return false, c.do(ctx, http.MethodPost, nodePath(id)+"?action=drain", in, nil)
}

// DeleteNode removes the node from Rancher (absent is fine).
func (c *Client) DeleteNode(ctx context.Context, _ rke2.RancherCluster, id string) error {
	err := c.do(ctx, http.MethodDelete, nodePath(id), nil, nil)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	return err
}
