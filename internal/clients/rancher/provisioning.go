package rancher

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/waldur/site-agent/internal/failure"
)

// The v1 (Steve) provisioning API: provisioning.cattle.io/v1 Clusters in fleet-default, the
// objects Rancher provisions RKE2 custom clusters from (or, with no rkeConfig, imports).

const provPath = "/v1/provisioning.cattle.io.clusters/fleet-default"

// ProvisioningCluster is a provisioning.cattle.io/v1 Cluster (the fields site-agent reads).
type ProvisioningCluster struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp string            `json:"deletionTimestamp,omitempty"`
	} `json:"metadata"`
	Spec struct {
		KubernetesVersion string         `json:"kubernetesVersion"`
		RKEConfig         map[string]any `json:"rkeConfig"` // nil: an imported cluster
	} `json:"spec"`
	Status struct {
		ClusterName string `json:"clusterName"` // the management cluster's id (c-m-…), "" until assigned
		Ready       bool   `json:"ready"`
	} `json:"status"`
}

// PingV1 lists one provisioning cluster (Steve's limit): the v1 API answers and accepts the
// key, whatever the number of clusters.
func (c *Client) PingV1(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, provPath, query("limit", "1"), nil, nil)
}

// ProvisioningCluster reads the provisioning cluster called name (failure.ErrNotFound when
// there is none).
func (c *Client) ProvisioningCluster(ctx context.Context, name string) (ProvisioningCluster, error) {
	var p ProvisioningCluster
	err := c.do(ctx, http.MethodGet, provPath+"/"+url.PathEscape(name), nil, nil, &p)
	return p, err
}

// Meta are the labels and annotations of an object the client makes.
type Meta struct {
	Labels      map[string]string
	Annotations map[string]string
}

// ProvisioningClusters lists the provisioning clusters whose labels carry every key and value
// of labels (a Kubernetes equality selector; nil: all).
func (c *Client) ProvisioningClusters(ctx context.Context, labels map[string]string) ([]ProvisioningCluster, error) {
	reqs := make([]string, 0, len(labels))
	for k, v := range labels {
		reqs = append(reqs, k+"="+v)
	}
	sort.Strings(reqs)
	q := url.Values{}
	if len(reqs) > 0 {
		q.Set("labelSelector", strings.Join(reqs, ","))
	}
	var list struct {
		Data []ProvisioningCluster `json:"data"`
	}
	err := c.do(ctx, http.MethodGet, provPath, q, nil, &list)
	return list.Data, err
}

// EnsureProvisioningCluster returns the provisioning cluster called name, creating it with
// meta and spec when there is none. Names are the client's: a create whose answer was lost
// answers 409 when repeated, and the cluster is read instead. It does not check whose cluster
// it found, nor change the spec of one that exists.
func (c *Client) EnsureProvisioningCluster(ctx context.Context, name string, meta Meta, spec map[string]any) (ProvisioningCluster, error) {
	p, err := c.ProvisioningCluster(ctx, name)
	if errors.Is(err, failure.ErrNotFound) {
		return c.CreateProvisioningCluster(ctx, name, meta, spec)
	}
	return p, err
}

// CreateProvisioningCluster creates the provisioning cluster called name with meta and spec,
// for a caller that has just read that there is none; a 409 (made meanwhile, or a create whose
// answer was lost) reads it instead, as EnsureProvisioningCluster.
func (c *Client) CreateProvisioningCluster(ctx context.Context, name string, meta Meta, spec map[string]any) (ProvisioningCluster, error) {
	var p ProvisioningCluster
	md := map[string]any{"name": name, "namespace": "fleet-default", "labels": meta.Labels}
	if len(meta.Annotations) > 0 {
		md["annotations"] = meta.Annotations
	}
	body := map[string]any{"type": "provisioning.cattle.io.cluster", "metadata": md, "spec": spec}
	err := c.do(ctx, http.MethodPost, provPath, nil, body, &p)
	if isConflict(err) {
		p, err = c.ProvisioningCluster(ctx, name)
	}
	return p, err
}

// UpdateProvisioningCluster reads the provisioning cluster called name and replaces it with
// what change makes of its spec and annotations (both may be changed in place). Steve's PUT
// replaces the object and needs the resourceVersion read (a stale one is 409: someone changed
// it meanwhile), so a conflict reads it again, a few times. The fields the client does not know
// travel unchanged; change returning false sends nothing.
func (c *Client) UpdateProvisioningCluster(ctx context.Context, name string, change func(spec map[string]any, annotations map[string]string) bool) error {
	path := provPath + "/" + url.PathEscape(name)
	var err error
	for range 3 {
		var raw struct {
			Metadata map[string]any `json:"metadata"`
			Spec     map[string]any `json:"spec"`
		}
		if err = c.do(ctx, http.MethodGet, path, nil, nil, &raw); err != nil {
			return err
		}
		if raw.Spec == nil {
			raw.Spec = map[string]any{}
		}
		ann := map[string]string{}
		if m, ok := raw.Metadata["annotations"].(map[string]any); ok {
			for k, v := range m {
				ann[k], _ = v.(string)
			}
		}
		if !change(raw.Spec, ann) {
			return nil
		}
		md := map[string]any{"name": name, "namespace": "fleet-default", "annotations": ann,
			"labels": raw.Metadata["labels"], "resourceVersion": raw.Metadata["resourceVersion"]}
		body := map[string]any{"type": "provisioning.cattle.io.cluster", "metadata": md, "spec": raw.Spec}
		if err = c.do(ctx, http.MethodPut, path, nil, body, nil); !isConflict(err) {
			return err
		}
	}
	return failure.Transient(err)
}

// DeleteProvisioningCluster asks Rancher to delete the provisioning cluster; an absent one is
// success. Rancher removes it (and its management cluster) some time later.
func (c *Client) DeleteProvisioningCluster(ctx context.Context, name string) error {
	err := c.do(ctx, http.MethodDelete, provPath+"/"+url.PathEscape(name), nil, nil, nil)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	return err
}
