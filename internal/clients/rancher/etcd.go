package rancher

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/waldur/site-agent/internal/failure"
)

// Annotations of RKE2's managed-etcd controller (k3s pkg/etcd/member_controller.go, which RKE2
// embeds with version.Program "rke2"): a Node of an etcd server annotated
// etcd.rke2.cattle.io/remove=true has its member removed (MemberRemove) by the controller, which
// then records the removed member's name in etcd.rke2.cattle.io/removed-node-name. Deleting
// the Node object removes the member too (the controller's OnRemove finalizer). Rancher's own
// etcd machine deletion does exactly this (v2.12.0 pkg/controllers/capr/etcdmgmt/saferemoval.go,
// called from pkg/controllers/capr/bootstrap/controller.go before it lifts the machine's
// pre-terminate hook).
const (
	EtcdRemoveAnnotation      = "etcd.rke2.cattle.io/remove"
	EtcdRemovedNodeAnnotation = "etcd.rke2.cattle.io/removed-node-name"
)

// RemoveEtcdMember asks the downstream cluster, through Rancher's /k8s/clusters/<id> proxy, to
// remove the etcd member of the node, and reports whether it is gone: the Node carries
// removed-node-name, or there is no such Node (never registered, or deleted, which removes the
// member before the Node goes). Otherwise it annotates the Node (once) and reports false.
func (c *Client) RemoveEtcdMember(ctx context.Context, clusterID, node string) (bool, error) {
	path := "/k8s/clusters/" + url.PathEscape(clusterID) + "/api/v1/nodes/" + url.PathEscape(node)
	var n struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, nil, &n)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	case n.Metadata.Annotations[EtcdRemovedNodeAnnotation] != "":
		return true, nil
	case n.Metadata.Annotations[EtcdRemoveAnnotation] == "true":
		return false, nil // asked; the controller has not confirmed yet
	}
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{EtcdRemoveAnnotation: "true"}}}
	_, err = c.send(ctx, call{method: http.MethodPatch, path: path, in: patch, inType: "application/merge-patch+json"})
	if errors.Is(err, failure.ErrNotFound) {
		return true, nil
	}
	return false, err
}
