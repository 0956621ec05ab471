package rancher

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Access is a Kubernetes permission: a verb on a resource of an API group ("" is core),
// cluster-wide when Namespace is "".
type Access struct {
	Verb, Group, Resource, Namespace string
}

func (a Access) String() string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Namespace != "" {
		s += " in " + a.Namespace
	}
	return s
}

// Denied asks a cluster, through Rancher's /k8s/clusters/<id> proxy, whether the API key's user
// may do each of want — a SelfSubjectAccessReview each, as `kubectl auth can-i` asks; Rancher's
// proxy passes the request on as the key's user, so the cluster's own RBAC answers (for the
// `local` cluster that includes Rancher's own objects: projects, bindings, provisioning clusters)
// — and returns those it may not, in the order asked. A review has no side effect.
func (c *Client) Denied(ctx context.Context, clusterID string, want []Access) ([]Access, error) {
	path := "/k8s/clusters/" + url.PathEscape(clusterID) + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	var denied []Access
	for _, a := range want {
		body := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
			"spec": map[string]any{"resourceAttributes": map[string]string{"verb": a.Verb, "group": a.Group, "resource": a.Resource,
				"namespace": a.Namespace}}}
		r, err := c.send(ctx, call{method: http.MethodPost, path: path, in: body})
		if err != nil {
			return nil, err
		}
		var review struct {
			Status struct {
				Allowed bool `json:"allowed"`
			} `json:"status"`
		}
		if err := json.Unmarshal(r.body, &review); err != nil {
			return nil, fmt.Errorf("rancher POST %s: unexpected answer: %w", path, err)
		}
		if !review.Status.Allowed {
			denied = append(denied, a)
		}
	}
	return denied, nil
}
