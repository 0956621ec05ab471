package ranchersim

import (
	"maps"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// k8sProxy forwards /k8s/clusters/<cid>/<tail> to the Kubernetes API server with its admin
// token (the caller's Rancher token was checked already).
func (s *Server) k8sProxy(cid, tail string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.serveLocalReview(w, r, cid, tail) {
			return
		}
		if !s.clusterExists(cid) {
			writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+cid+"\" not found")
			return
		}
		proxy := s.kubeProxy(cid)
		if proxy == nil && s.serveNode(w, r, cid, tail) {
			return
		}
		if proxy == nil {
			writeError(w, http.StatusServiceUnavailable, "ClusterUnavailable", "cluster agent is not connected")
			return
		}
		out := r.Clone(r.Context())
		out.URL.Path, out.URL.RawPath = tail, ""
		if name := namespaceRead(r.Method, tail); name != "" {
			s.serveNamespaceRead(w, out, proxy, cid, name)
			return
		}
		proxy.ServeHTTP(w, out)
	}
}

func (s *Server) clusterExists(cid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.clusters[cid] != nil
}

// kubeFor returns the cluster's Kubernetes client, or answers 404/503 for an unknown cluster or
// one without a way to its API (nil).
func (s *Server) kubeFor(w http.ResponseWriter, cid string) kubernetes.Interface {
	if !s.clusterExists(cid) {
		writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+cid+"\" not found")
		return nil
	}
	kube := s.kubeClient(cid)
	if kube == nil {
		writeError(w, http.StatusServiceUnavailable, "ClusterUnavailable", "cluster agent is not connected")
	}
	return kube
}

func renderNamespace(base, cid string, ns *corev1.Namespace) map[string]any {
	self := base + "/v3/clusters/" + cid + "/namespaces/" + ns.Name
	state := "active"
	if ns.DeletionTimestamp != nil {
		state = "removing"
	}
	return map[string]any{"id": ns.Name, "type": "namespace", "baseType": "namespace", "name": ns.Name,
		"projectId": nilIfEmpty(ns.Annotations[projectIDKey]), "labels": nonNil(ns.Labels), "annotations": nonNil(ns.Annotations),
		"state": state, "links": map[string]string{"self": self, "remove": self}, "actions": map[string]string{}}
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request, cid string) {
	kube := s.kubeFor(w, cid)
	if kube == nil {
		return
	}
	f := s.filters(r, "namespaces.list", map[string]bool{"id": true, "name": true, "projectId": true, "state": true})
	list, err := kube.CoreV1().Namespaces().List(r.Context(), metav1.ListOptions{})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	var items []map[string]any
	for i := range list.Items {
		if item := renderNamespace(baseURL(r), cid, &list.Items[i]); matches(item, f) {
			items = append(items, item)
		}
	}
	s.writeCollection(w, r, "namespace", items)
}

func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request, cid string) {
	kube := s.kubeFor(w, cid)
	if kube == nil {
		return
	}
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "namespace.create", body, map[string]fieldKind{"name": kString, "projectId": kReference,
		"labels": kStringMap, "annotations": kStringMap, "description": kString, "clusterId": kReference, "resourceQuota": kString})
	if !ok {
		return
	}
	name, _ := in["name"].(string)
	if name == "" {
		fieldError(w, "MissingRequired", "name", "")
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
	if l, ok := in["labels"].(map[string]string); ok {
		maps.Copy(ns.Labels, l)
	}
	if a, ok := in["annotations"].(map[string]string); ok {
		maps.Copy(ns.Annotations, a)
	}
	ns.Annotations[creatorIDKey] = simUserID // norman records the creator (removal.go)
	if pid, _ := in["projectId"].(string); pid != "" {
		ns.Annotations[projectIDKey] = pid
		ns.Labels[projectIDKey] = projectPart(pid)
	}
	created, err := kube.CoreV1().Namespaces().Create(r.Context(), ns, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		writeError(w, http.StatusConflict, "AlreadyExists", "namespaces \""+name+"\" already exists")
	case apierrors.IsInvalid(err):
		fieldError(w, "InvalidFormat", "name", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "ServerError", err.Error())
	default:
		writeJSON(w, http.StatusCreated, renderNamespace(baseURL(r), cid, created))
	}
}

func (s *Server) getNamespace(w http.ResponseWriter, r *http.Request, cid, name string) {
	kube := s.kubeFor(w, cid)
	if kube == nil {
		return
	}
	ns, err := kube.CoreV1().Namespaces().Get(r.Context(), name, metav1.GetOptions{})
	switch {
	case isNotFound(err):
		writeError(w, http.StatusNotFound, "NotFound", "namespaces \""+name+"\" not found")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "ServerError", err.Error())
	default:
		writeJSON(w, http.StatusOK, renderNamespace(baseURL(r), cid, ns))
	}
}

func (s *Server) deleteNamespace(w http.ResponseWriter, r *http.Request, cid, name string) {
	kube := s.kubeFor(w, cid)
	if kube == nil {
		return
	}
	ns, err := kube.CoreV1().Namespaces().Get(r.Context(), name, metav1.GetOptions{})
	if err == nil {
		err = kube.CoreV1().Namespaces().Delete(r.Context(), name, metav1.DeleteOptions{})
	}
	switch {
	case isNotFound(err):
		writeError(w, http.StatusNotFound, "NotFound", "namespaces \""+name+"\" not found")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "ServerError", err.Error())
	default:
		out := renderNamespace(baseURL(r), cid, ns)
		out["state"] = "removing"
		writeJSON(w, http.StatusOK, out)
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
