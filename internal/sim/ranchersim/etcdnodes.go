package ranchersim

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Downstream Node objects of RKE2 clusters whose Kubernetes API the simulator does not reach
// (no Options.Downstream, no Upstream, no agent tunnel): GET and PATCH (JSON merge patch of metadata.annotations) of
// /k8s/clusters/<id>/api/v1/nodes/<name>, for the nodes its v3 API lists — what removing a
// server's etcd member needs. The simulator plays RKE2's managed-etcd controller (k3s
// pkg/etcd/member_controller.go, RKE2's version.Program "rke2"): on a Node of an etcd server
// (label node-role.kubernetes.io/etcd) annotated etcd.rke2.cattle.io/remove=true it removes the
// member — through the EtcdRemover, the node emulator's etcd — and records the member's name in
// etcd.rke2.cattle.io/removed-node-name; the controller retries until the removal succeeds.
// A node whose remover has not been set is removed at the next sync (no etcd is modelled).

// EtcdRemover removes a node's member from the cluster's etcd and reports whether it is gone.
type EtcdRemover func(clusterID, node string) (removed bool, err error)

const (
	annEtcdRemove  = "etcd.rke2.cattle.io/remove"
	annEtcdRemoved = "etcd.rke2.cattle.io/removed-node-name"
	labelEtcdRole  = "node-role.kubernetes.io/etcd"
)

// SetEtcdRemover sets who removes etcd members (nil: removed at once).
func (s *Server) SetEtcdRemover(f EtcdRemover) {
	s.mu.Lock()
	s.etcdRemover = f
	s.mu.Unlock()
}

// serveNode answers a Node request of the downstream API; false when tail is not one.
func (s *Server) serveNode(w http.ResponseWriter, r *http.Request, cid, tail string) bool {
	name, ok := strings.CutPrefix(tail, "/api/v1/nodes/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return false
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPatch:
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/merge-patch+json" {
			kubeStatus(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
			return true
		}
		var patch struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&patch); err != nil {
			kubeStatus(w, http.StatusBadRequest, "BadRequest", "error decoding patch: "+err.Error())
			return true
		}
		if !s.annotateNode(cid, name, patch.Metadata.Annotations) {
			kubeStatus(w, http.StatusNotFound, "NotFound", `nodes "`+name+`" not found`)
			return true
		}
	default:
		kubeStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource")
		return true
	}
	s.syncEtcdMember(cid, name)
	node, ok := s.renderKubeNode(cid, name)
	if !ok {
		kubeStatus(w, http.StatusNotFound, "NotFound", `nodes "`+name+`" not found`)
		return true
	}
	writeJSON(w, http.StatusOK, node)
	return true
}

// nodeByNameLocked finds the cluster's v3 node of that name (s.mu held).
func (s *Server) nodeByNameLocked(cid, name string) *simNode {
	for _, n := range s.nodes {
		if n.clusterID == cid && n.name == name {
			return n
		}
	}
	return nil
}

func (s *Server) annotateNode(cid, name string, ann map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeByNameLocked(cid, name)
	if n == nil {
		return false
	}
	if s.nodeAnn == nil {
		s.nodeAnn = map[string]map[string]string{}
	}
	if s.nodeAnn[n.id] == nil {
		s.nodeAnn[n.id] = map[string]string{}
	}
	for k, v := range ann {
		s.nodeAnn[n.id][k] = v
	}
	return true
}

// syncEtcdMember is the managed-etcd controller's sync of one Node.
func (s *Server) syncEtcdMember(cid, name string) {
	s.mu.Lock()
	n := s.nodeByNameLocked(cid, name)
	if n == nil || !contains(n.roles, "etcd") || s.nodeAnn[n.id][annEtcdRemove] != "true" || s.nodeAnn[n.id][annEtcdRemoved] != "" {
		s.mu.Unlock()
		return
	}
	remove, id := s.etcdRemover, n.id
	s.mu.Unlock()
	removed, err := true, error(nil)
	if remove != nil {
		removed, err = remove(cid, name)
	}
	if err != nil || !removed {
		return // the controller tries again at the next sync
	}
	s.mu.Lock()
	if s.nodeAnn[id] != nil {
		s.nodeAnn[id][annEtcdRemoved] = name
	}
	s.mu.Unlock()
}

func (s *Server) renderKubeNode(cid, name string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeByNameLocked(cid, name)
	if n == nil {
		return nil, false
	}
	labels := map[string]string{}
	for k, v := range n.labels {
		labels[k] = v
	}
	if contains(n.roles, "etcd") {
		labels[labelEtcdRole] = "true"
	}
	ann := map[string]string{}
	for k, v := range s.nodeAnn[n.id] {
		ann[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.name, "labels": labels, "annotations": ann}}, true
}

// kubeStatus writes a Kubernetes Status error.
func kubeStatus(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"message": msg, "reason": reason, "code": code})
}
