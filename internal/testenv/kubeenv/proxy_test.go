package kubeenv_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// clusterProxy mimics Rancher's /k8s/clusters/<id>/ proxy: it authenticates the caller with a
// Rancher-style token, strips the prefix and forwards to the cluster with the cluster's own
// credentials. Unknown clusters get 404, bad tokens 401.
func clusterProxy(t *testing.T, env *kubeenv.Env, clusterID, token string) *httptest.Server {
	t.Helper()
	target, err := url.Parse(env.Host)
	if err != nil {
		t.Fatalf("parse host: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	prefix := "/k8s/clusters/" + clusterID
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(pr.In.URL.Path, prefix), "/")
			pr.Out.URL.RawPath = ""
			pr.Out.Host = target.Host
			pr.Out.Header.Set("Authorization", "Bearer "+env.Token)
		},
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		FlushInterval: -1, // stream watches as they come
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			http.Error(w, "cluster not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "must authenticate", http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRancherStyleClusterProxy proves client-go works through a path-prefixed reverse proxy,
// which is how the Rancher backend reaches downstream clusters.
func TestRancherStyleClusterProxy(t *testing.T) {
	env := kubeenv.Shared(t)
	const token = "token-abcde:s3cret"
	srv := clusterProxy(t, env, "c-test", token)
	proxyCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	mine := env.Namespace(t, "proxy", nil)

	tests := []struct {
		name    string
		path    string
		token   string
		wantErr func(error) bool
	}{
		{name: "lists namespaces", path: "/k8s/clusters/c-test", token: token},
		{name: "trailing slash", path: "/k8s/clusters/c-test/", token: token},
		{name: "wrong token", path: "/k8s/clusters/c-test", token: "token-x:y", wantErr: apierrors.IsUnauthorized},
		{name: "unknown cluster", path: "/k8s/clusters/c-other", token: token, wantErr: apierrors.IsNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := proxiedClient(t, srv.URL+tc.path, tc.token, proxyCA)
			list, err := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("list namespaces: err = %v, want a matching API error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("list namespaces through the proxy: %v", err)
			}
			var names []string
			for _, ns := range list.Items {
				names = append(names, ns.Name)
			}
			for _, want := range []string{"default", "kube-system", mine} {
				if !slices.Contains(names, want) {
					t.Errorf("namespace %q missing from %v", want, names)
				}
			}
		})
	}

	t.Run("writes pass through", func(t *testing.T) {
		cs := proxiedClient(t, srv.URL+"/k8s/clusters/c-test", token, proxyCA)
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "via-proxy"},
			Data:       map[string]string{"k": "v"},
		}
		if _, err := cs.CoreV1().ConfigMaps(mine).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create through the proxy: %v", err)
		}
		got, err := env.Clientset.CoreV1().ConfigMaps(mine).Get(t.Context(), "via-proxy", metav1.GetOptions{})
		if err != nil || got.Data["k"] != "v" {
			t.Fatalf("read back directly: %+v, %v", got, err)
		}
	})
}

func proxiedClient(t *testing.T, host, token string, ca []byte) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
	})
	if err != nil {
		t.Fatalf("client for %s: %v", host, err)
	}
	return cs
}
