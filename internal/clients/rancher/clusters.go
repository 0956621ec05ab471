package rancher

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/waldur/site-agent/internal/failure"
)

// Cluster is a v3 (management) cluster.
type Cluster struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	State     string            `json:"state"`
	NodeCount int               `json:"nodeCount"`
	Capacity  map[string]string `json:"capacity"`
	// APIEndpoint is where Rancher reaches an imported cluster, recorded from the cluster
	// agent's parameters at each tunnel handshake ("" before one is recorded).
	APIEndpoint string `json:"apiEndpoint"`
}

// Capacity is what a cluster's nodes offer, summed (the cluster's capacity field).
type Capacity struct {
	Nodes        int
	CPUMillis    int64
	MemoryBytes  int64
	StorageBytes int64 // ephemeral storage
}

// Token is a v3 API token (read by its name, the access key, for diagnostics).
type Token struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Enabled   *bool  `json:"enabled"`
	Expired   bool   `json:"expired"`
	ExpiresAt string `json:"expiresAt"`
}

func clusterPath(id string) string { return "/v3/clusters/" + url.PathEscape(id) }

// APIRoot reads GET /v3 and checks that it is Rancher's v3 API (it names its schema document in
// X-API-Schemas, which is not fetched).
func (c *Client) APIRoot(ctx context.Context) error {
	r, err := c.send(ctx, call{method: http.MethodGet, path: "/v3"})
	if err != nil {
		return err
	}
	if r.header.Get("X-API-Schemas") == "" {
		return failure.Errorf("%s/v3 is not a Rancher v3 API (no X-API-Schemas header); check the URL", c.URL())
	}
	return nil
}

// PingV3 lists one cluster: the v3 API answers and accepts the key.
func (c *Client) PingV3(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/v3/clusters", query("limit", "1"), nil, nil)
}

// Cluster reads a management cluster (failure.ErrNotFound when there is none).
func (c *Client) Cluster(ctx context.Context, id string) (Cluster, error) {
	var out Cluster
	err := c.do(ctx, http.MethodGet, clusterPath(id), nil, nil, &out)
	return out, err
}

// Clusters lists every management cluster the key can see.
func (c *Client) Clusters(ctx context.Context) ([]Cluster, error) {
	return listAll[Cluster](ctx, c, "/v3/clusters", nil)
}

// EnsureCluster returns the cluster called name, creating it (an imported cluster, in state
// pending until an agent connects) when there is none. A create answered NotUnique was made
// meanwhile: it is looked up again.
func (c *Client) EnsureCluster(ctx context.Context, name, description string) (Cluster, error) {
	if cl, ok, err := c.clusterByName(ctx, name); err != nil || ok {
		return cl, err
	}
	var cl Cluster
	err := c.do(ctx, http.MethodPost, "/v3/clusters", nil,
		map[string]any{"type": "cluster", "name": name, "description": description}, &cl)
	if failure.HasStatus(err, http.StatusUnprocessableEntity) {
		if found, ok, ferr := c.clusterByName(ctx, name); ferr == nil && ok {
			return found, nil
		}
	}
	return cl, err
}

func (c *Client) clusterByName(ctx context.Context, name string) (Cluster, bool, error) {
	list, err := listAll[Cluster](ctx, c, "/v3/clusters", query("name", name))
	if err != nil {
		return Cluster{}, false, err
	}
	for _, cl := range list {
		if cl.Name == name {
			return cl, true, nil
		}
	}
	return Cluster{}, false, nil
}

// UpdateCluster sets fields of a management cluster. Rancher's v3 API merges the fields given
// into the object (rancher/norman store/proxy/proxy_store.go Update: merge.APIUpdateMerge) and
// requires the cluster's name in the body (rancher v2.12 pkg/api/norman/store/cluster
// cluster_store.go Update: MissingRequired "Cluster name"), so it is read first.
func (c *Client) UpdateCluster(ctx context.Context, id string, fields map[string]any) error {
	cl, err := c.Cluster(ctx, id)
	if err != nil {
		return err
	}
	body := map[string]any{"name": cl.Name}
	for k, v := range fields {
		body[k] = v
	}
	return c.do(ctx, http.MethodPut, clusterPath(id), nil, body, nil)
}

// DeleteCluster removes a management cluster; an absent one is success.
func (c *Client) DeleteCluster(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, clusterPath(id), nil, nil, nil)
	if failure.HasStatus(err, http.StatusNotFound) {
		return nil
	}
	return err
}

// ClusterCapacity reads the cluster's summed node capacity.
func (c *Client) ClusterCapacity(ctx context.Context, id string) (Capacity, error) {
	cl, err := c.Cluster(ctx, id)
	if err != nil {
		return Capacity{}, err
	}
	var v [3]int64
	for i, k := range []string{"cpu", "memory", "ephemeral-storage"} {
		s, ok := cl.Capacity[k]
		if !ok {
			continue
		}
		q, err := ParseQuantity(s)
		if err != nil {
			return Capacity{}, fmt.Errorf("cluster %s capacity %s %.40q: %w", id, k, s, err)
		}
		scale := resource.Scale(0)
		if k == "cpu" {
			scale = resource.Milli
		}
		if v[i], ok = Scaled(q, scale); !ok || v[i] < 0 {
			return Capacity{}, fmt.Errorf("cluster %s capacity %s %.40q: beyond what an int64 counts, or negative", id, k, s)
		}
	}
	return Capacity{Nodes: cl.NodeCount, CPUMillis: v[0], MemoryBytes: v[1], StorageBytes: v[2]}, nil
}

// Token reads an API token by name (the access key of an API key).
func (c *Client) Token(ctx context.Context, name string) (Token, error) {
	var out Token
	err := c.do(ctx, http.MethodGet, "/v3/tokens/"+url.PathEscape(name), nil, nil, &out)
	return out, err
}
