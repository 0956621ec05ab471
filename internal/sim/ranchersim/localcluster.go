package ranchersim

import (
	"encoding/json"
	"net/http"
)

// Rancher's own cluster `local` holds Rancher's objects (projects, bindings, provisioning
// clusters) as Kubernetes resources, and any API key reaches its Kubernetes API through
// /k8s/clusters/local, where the cluster's RBAC answers for the key's user (observed on v2.12.0:
// a user with no role on `local` may still ask SelfSubjectAccessReviews there). The simulator has
// no such cluster; it answers only those reviews, allowed: its one API key acts for an
// administrator.
const ssarPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

// serveLocalReview answers a SelfSubjectAccessReview on `local` when the simulator has no
// cluster of that name; it reports whether it did.
func (s *Server) serveLocalReview(w http.ResponseWriter, r *http.Request, cid, tail string) bool {
	if cid != "local" || tail != ssarPath || s.clusterExists(cid) {
		return false
	}
	if r.Method != http.MethodPost {
		writeStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource")
		return true
	}
	var review map[string]any
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review["kind"] != "SelfSubjectAccessReview" {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the body is not a SelfSubjectAccessReview")
		return true
	}
	review["status"] = map[string]any{"allowed": true, "reason": "ranchersim: the API key acts for an administrator"}
	writeJSON(w, http.StatusCreated, review)
	return true
}
