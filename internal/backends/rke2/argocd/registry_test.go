package argocd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// kubeconfig is a kubeconfig document for the test's API server.
func kubeconfig(e *kubeenv.Env) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: argocd
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: argocd
  context: {cluster: argocd, user: admin}
current-context: argocd
`, e.Host, encodeB64(e.CAData), e.Token)
}

func encodeB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestRegistryAgainstAKubeAPIServer: against a real kube-apiserver, a cluster secret is made
// once (one mint however often Ensure runs), carries ArgoCD's labels and data, has its
// Longhorn label brought in step, and is removed (twice over); the check is a dry run that
// fails for a namespace that does not exist; a kubeconfig may be given as a file path.
func TestRegistryAgainstAKubeAPIServer(t *testing.T) {
	e := kubeenv.Start(t)
	ctx := context.Background()
	ns := e.Namespace(t, "argocd", nil)
	r, err := New(secret.New(kubeconfig(e)), ns, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Check(ctx); !c.OK {
		t.Fatalf("check: %s", c.Detail)
	}
	const uuid = "0123456789abcdef0123456789abcdef"
	mints := 0
	mint := func(context.Context) (rke2.Kubeconfig, error) {
		mints++
		return rke2.Kubeconfig{Server: "https://rancher.test/k8s/clusters/c-m-abc", Token: secret.New("kubeconfig-u-1:tok"), CAData: []byte("PEM")}, nil
	}
	c := rke2.ArgoCluster{UUID: uuid, Name: "prod", Longhorn: true}
	for range 3 {
		if err := r.Ensure(ctx, c, mint); err != nil {
			t.Fatal(err)
		}
	}
	if mints != 1 {
		t.Fatalf("%d kubeconfigs minted, want 1", mints)
	}
	got, err := e.Clientset.CoreV1().Secrets(ns).Get(ctx, SecretName(uuid), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[LabelSecretType] != "cluster" || got.Labels[LabelLonghorn] != "true" {
		t.Fatalf("labels %v", got.Labels)
	}
	var conf struct {
		BearerToken string `json:"bearerToken"`
		TLS         struct {
			CAData string `json:"caData"`
		} `json:"tlsClientConfig"`
	}
	if err := json.Unmarshal(got.Data["config"], &conf); err != nil || conf.BearerToken != "kubeconfig-u-1:tok" || conf.TLS.CAData != encodeB64([]byte("PEM")) {
		t.Fatalf("config %s: %v", got.Data["config"], err)
	}
	if string(got.Data["name"]) != "prod" || string(got.Data["server"]) != "https://rancher.test/k8s/clusters/c-m-abc" {
		t.Fatalf("data name %q server %q", got.Data["name"], got.Data["server"])
	}
	c.Longhorn = false
	if err := r.Ensure(ctx, c, mint); err != nil {
		t.Fatal(err)
	}
	got, _ = e.Clientset.CoreV1().Secrets(ns).Get(ctx, SecretName(uuid), metav1.GetOptions{})
	if _, has := got.Labels[LabelLonghorn]; has || mints != 1 {
		t.Fatalf("after Longhorn was dropped: labels %v, %d mints", got.Labels, mints)
	}
	for range 2 {
		if err := r.Remove(ctx, uuid); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := e.Clientset.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("secrets left: %d (the dry-run check must not create one)", len(l.Items))
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig(e)), 0o600); err != nil {
		t.Fatal(err)
	}
	missing, err := New(secret.New(path), "no-such-namespace", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c := missing.Check(ctx); c.OK || !strings.Contains(c.Detail, "no-such-namespace") {
		t.Fatalf("check of a missing namespace: %+v", c)
	}
}

// TestNewNamesTheSetting: an unusable kubeconfig is refused naming the setting, without
// quoting the document (it holds a token).
func TestNewNamesTheSetting(t *testing.T) {
	for _, v := range []string{"/nonexistent/kubeconfig", "apiVersion: v1\nkind: Config\nusers:\n- name: x\n  user: {token: s3cr3t-value}\n"} {
		_, err := New(secret.New(v), "argocd", time.Second)
		if err == nil || !strings.Contains(err.Error(), "argocd_k8s_kubeconfig") || strings.Contains(err.Error(), "s3cr3t-value") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
