package vaulttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"
)

// kubeReviewer stands in for the Kubernetes API server's TokenReview endpoint
// (POST /apis/authentication.k8s.io/v1/tokenreviews), which Vault's kubernetes auth method calls
// to check a service account token. It knows one valid token (jwt) for namespace/name; any
// other token (otherJWT, a well-formed token for the same account) is reported unauthenticated,
// as a revoked or foreign token would be.
type kubeReviewer struct {
	url           string
	jwt, otherJWT string

	mu    sync.Mutex
	count int
}

func newKubeReviewer(t *testing.T, namespace, name string) *kubeReviewer {
	t.Helper()
	k := &kubeReviewer{jwt: serviceAccountJWT(t, namespace, name, "uid-1"), otherJWT: serviceAccountJWT(t, namespace, name, "uid-1")}
	user := map[string]any{"username": "system:serviceaccount:" + namespace + ":" + name, "uid": "uid-1",
		"groups": []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/tokenreviews" {
			http.Error(w, `{"kind":"Status","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") {
			http.Error(w, `{"kind":"Status","status":"Failure","reason":"Unauthorized","code":401}`, http.StatusUnauthorized)
			return
		}
		var review struct {
			Spec struct{ Token string } `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Spec.Token == "" {
			http.Error(w, `{"kind":"Status","status":"Failure","reason":"BadRequest","code":400}`, http.StatusBadRequest)
			return
		}
		k.mu.Lock()
		k.count++
		k.mu.Unlock()
		status := map[string]any{"authenticated": false, "error": "invalid bearer token"}
		if review.Spec.Token == k.jwt {
			status = map[string]any{"authenticated": true, "user": user}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
			"spec": map[string]any{"token": review.Spec.Token}, "status": status})
	}))
	t.Cleanup(srv.Close)
	k.url = srv.URL
	return k
}

func (k *kubeReviewer) reviews() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count
}

// serviceAccountJWT signs a legacy service account token (ES256) with a fresh key.
func serviceAccountJWT(t *testing.T, namespace, name, uid string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	claims := map[string]any{
		"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:" + namespace + ":" + name,
		"iat": time.Now().Unix(), "kubernetes.io/serviceaccount/namespace": namespace,
		"kubernetes.io/serviceaccount/service-account.name": name, "kubernetes.io/serviceaccount/service-account.uid": uid,
		"kubernetes.io/serviceaccount/secret.name": name + "-token",
	}
	signed := enc(map[string]string{"alg": "ES256", "typ": "JWT"}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// kubernetesAuth enables the kubernetes auth method against the reviewer and creates a role
// bound to namespace/serviceAccount with the site-agent policy.
func (c *cluster) kubernetesAuth(t *testing.T, reviewerURL, serviceAccount, namespace string) {
	t.Helper()
	if err := c.root.Sys().EnableAuthWithOptions("kubernetes", &api.EnableAuthOptions{Type: "kubernetes"}); err != nil {
		t.Fatal(err)
	}
	c.write(t, "auth/kubernetes/config", map[string]any{"kubernetes_host": reviewerURL, "disable_local_ca_jwt": true})
	c.write(t, "auth/kubernetes/role/site-agent", map[string]any{"bound_service_account_names": serviceAccount,
		"bound_service_account_namespaces": namespace, "token_policies": "site-agent", "token_ttl": "1h"})
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
