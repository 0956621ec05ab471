package ranchersim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// Rancher v2.12.0 writes every namespace of a cluster moments after it is made: the lifecycle
// "namespace-auth" (pkg/controllers/managementuser/rbac/handler_base.go,
// workload.Core.Namespaces("").AddLifecycle) adds the finalizer controller.cattle.io/namespace-auth
// and the annotation lifecycle.cattle.io/create.namespace-auth, and the conditions it and the
// resource quota controller keep go to the cattle.io/status annotation. Observed on the real
// server (issue 16): a namespace made through /v3/clusters/local/namespaces at second 23 was
// written by "rancher" at second 24, with a new resourceVersion — a client that read it before
// and updated it from what it read got 409 Conflict.
//
// The simulator makes that write at the race's worst moment: during a namespace's first GET
// through /k8s/clusters/<id>, after the API server answered and before the answer is passed on,
// so the reader always holds the version the controller has just replaced. The finalizer is left
// out: nothing here would take it off on delete (Rancher's lifecycle does), and namespaces would
// stay Terminating.
const (
	nsAuthCreated = "lifecycle.cattle.io/create.namespace-auth"
	cattleStatus  = "cattle.io/status"
	nsAuthStatus  = `{"Conditions":[{"Type":"InitialRolesPopulated","Status":"Unknown","Message":"Populating initial roles","LastUpdateTime":""}]}`
)

// namespaceRead is the namespace a GET of tail (/api/v1/namespaces/<name>) reads, or "".
func namespaceRead(method, tail string) string {
	name, ok := strings.CutPrefix(tail, "/api/v1/namespaces/")
	if method != http.MethodGet || !ok || strings.Contains(name, "/") {
		return ""
	}
	return name
}

// serveNamespaceRead proxies r, a GET of namespace name of cluster cid, and runs namespace-auth's
// first write on it between the API server's answer and the client's.
func (s *Server) serveNamespaceRead(w http.ResponseWriter, r *http.Request, proxy http.Handler, cid, name string) {
	rec := httptest.NewRecorder()
	proxy.ServeHTTP(rec, r)
	if rec.Code == http.StatusOK {
		s.namespaceAuth(r.Context(), cid, name)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// namespaceAuth annotates the namespace as namespace-auth does on its first sight of it; a
// namespace it annotated already, or one being deleted, is left alone.
func (s *Server) namespaceAuth(ctx context.Context, cid, name string) {
	kube := s.kubeClient(cid)
	if kube == nil {
		return
	}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil || ns.Annotations[nsAuthCreated] != "" || ns.DeletionTimestamp != nil {
			return err
		}
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[nsAuthCreated] = "true"
		ns.Annotations[cattleStatus] = nsAuthStatus
		_, err = kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		return err
	})
	if err != nil && s.opts.Logf != nil {
		s.opts.Logf("namespace-auth on %s/%s: %v", cid, name, err)
	}
}
