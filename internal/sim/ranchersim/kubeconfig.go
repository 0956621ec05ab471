package ranchersim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Rancher's kubeconfig action, as the rke2 backend uses it for ArgoCD:
// POST /v3/clusters/<id>?action=generateKubeconfig answers {"config": "<kubeconfig YAML>"}
// with a new API token for the caller (kubeconfig-<user>:<secret>) each time, pointing at
// Rancher's proxy /k8s/clusters/<id>. Tokens are counted per cluster (KubeconfigTokens) and go
// with the cluster. An unknown action is 404 and a body other than empty or {} is 422, as
// Rancher's norman answers.

// clusterAction serves POST /v3/clusters/<id>?action=….
func (s *Server) clusterAction(w http.ResponseWriter, r *http.Request, id string) {
	if a := r.URL.Query().Get("action"); a != "generateKubeconfig" {
		writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("action %q not found for cluster", a))
		return
	}
	body, _ := io.ReadAll(r.Body)
	if b := strings.TrimSpace(string(body)); b != "" && b != "{}" {
		writeError(w, http.StatusUnprocessableEntity, "InvalidBodyContent", "generateKubeconfig takes no input")
		return
	}
	s.mu.Lock()
	c := s.st.clusters[id]
	if c == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+id+"\" not found")
		return
	}
	raw := make([]byte, 20)
	_, _ = rand.Read(raw)
	token := "kubeconfig-user-sim01:" + hex.EncodeToString(raw)
	if s.kubeconfigs == nil {
		s.kubeconfigs = map[string][]string{}
	}
	s.kubeconfigs[id] = append(s.kubeconfigs[id], token)
	name := c.Name
	s.mu.Unlock()
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]q
  cluster:
    server: %[2]q
users:
- name: %[1]q
  user:
    token: %[3]q
contexts:
- name: %[1]q
  context:
    user: %[1]q
    cluster: %[1]q
current-context: %[1]q
`, name, baseURL(r)+"/k8s/clusters/"+id, token)
	writeJSON(w, http.StatusOK, map[string]any{"type": "generateKubeConfigOutput", "baseType": "generateKubeConfigOutput", "config": config})
}

// KubeconfigTokens lists the tokens generateKubeconfig made for the cluster (by management
// id), oldest first; they go with the cluster.
func (s *Server) KubeconfigTokens(clusterID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.kubeconfigs[clusterID]...)
}
