package ranchersim

import (
	"context"
	"net/http"
	"net/http/httputil"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The downstream Kubernetes API of the RKE2 clusters (Options.Downstream): the clusters made
// through the v1 provisioning API (either bootstrap mode) are reached there, as Rancher reaches
// a downstream cluster through its agent —
//
//   - /k8s/clusters/<id>/… is a reverse proxy to it (the Node annotations that remove an etcd
//     member land on the real Nodes; RKE2's managed-etcd controller is then whatever plays the
//     cluster's servers, e.g. nodeemu.MemberController);
//   - the v3 cluster's nodeCount, capacity and allocatable are summed from its Nodes when the
//     cluster is read, as Rancher's cluster stats aggregate the downstream Nodes;
//   - deleting a v3 node deletes the downstream Node of that name, as Rancher does for an
//     imported cluster's node and CAPI's machine controller for a provisioned one.
//
// One downstream serves every such cluster: a test has one RKE2 cluster per simulator.

// downstream is the proxy and client of Options.Downstream (nil: none).
type downstream struct {
	proxy *httputil.ReverseProxy
	kube  kubernetes.Interface
}

// downstreamFor is the downstream of cluster cid when it is a provisioning cluster (nil: none).
func (s *Server) downstreamFor(cid string) *downstream {
	if s.down == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provOfLocked(cid) == nil {
		return nil
	}
	return s.down
}

// downstreamStats sums the downstream Nodes into the cluster's stats (a failure keeps the last).
func (s *Server) downstreamStats(ctx context.Context, cid string) {
	d := s.downstreamFor(cid)
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := d.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return
	}
	capacity, allocatable := corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range nodes.Items {
		addList(capacity, n.Status.Capacity)
		addList(allocatable, n.Status.Allocatable)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[cid]; c != nil && c.imp != nil {
		c.imp.stats = clusterStats{nodes: len(nodes.Items), capacity: render(capacity), allocatable: render(allocatable)}
	}
}

// deleteDownstreamNode deletes the Node of a deleted v3 node.
func (s *Server) deleteDownstreamNode(cid, name string) {
	d := s.downstreamFor(cid)
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) && s.opts.Logf != nil {
		s.opts.Logf("ranchersim: deleting the downstream Node %s of cluster %s: %v", name, cid, err)
	}
}

// handleDownstreamCluster answers GET /v3/clusters/<id> with the downstream's totals.
func (s *Server) handleDownstreamCluster(w http.ResponseWriter, r *http.Request, id string) {
	s.downstreamStats(r.Context(), id)
	s.handleCluster(w, r, id)
}
