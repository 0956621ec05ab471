package rancherkccrd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }

var crdOnce sync.Once

// cluster is the shared real kube-apiserver with the CRD of configs/ installed, one namespace
// per test, and the operator played by the test through the status subresource.
type cluster struct {
	t   *testing.T
	env *kubeenv.Env
	ns  string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	env := kubeenv.Shared(t)
	crdOnce.Do(func() {
		manifest, err := os.ReadFile("../../../configs/rancher-kc-crd/crd.yaml")
		if err != nil {
			t.Fatal(err)
		}
		env.InstallCRD(t, manifest)
	})
	return &cluster{t: t, env: env, ns: env.Namespace(t, "kccrd", nil)}
}

// kubeconfig writes a kubeconfig for token with context "aio-rancher" and returns its path.
func (c *cluster) kubeconfig(token string) string {
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: agent
  user: {token: %q}
contexts:
- name: aio-rancher
  context: {cluster: test, user: agent}
`, c.env.Host, base64.StdEncoding.EncodeToString(c.env.CAData), token)
	path := filepath.Join(c.t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// backend builds the backend as the agent does, from backend_settings.
func (c *cluster) backend(extra backends.Settings) *Backend {
	c.t.Helper()
	s := backends.Settings{"kubeconfig_path": c.kubeconfig(c.env.Token), "context": "aio-rancher", "namespace": c.ns,
		"role_map": map[string]any{"project_member": "project-member", "project_admin": "project-owner"}}
	for k, v := range extra {
		s[k] = v
	}
	b, _, err := New(backends.Params{Settings: s, Logger: zaptest.NewLogger(c.t)})
	if err != nil {
		c.t.Fatal(err)
	}
	return b.(*Backend)
}

func (c *cluster) path(name string, sub ...string) []string {
	return append([]string{"/apis/waldur.io/v1alpha1/namespaces", c.ns, "managedrancherprojects", name}, sub...)
}

// get reads a custom resource as an admin (nil when absent).
func (c *cluster) get(name string) *unstructured.Unstructured {
	c.t.Helper()
	raw, err := c.env.Clientset.CoreV1().RESTClient().Get().AbsPath(c.path(name)...).Do(context.Background()).Raw()
	if err != nil {
		return nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		c.t.Fatal(err)
	}
	return obj
}

// names lists the custom resources of the namespace.
func (c *cluster) names() []string {
	c.t.Helper()
	raw, err := c.env.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/waldur.io/v1alpha1/namespaces", c.ns, "managedrancherprojects").
		Do(context.Background()).Raw()
	if err != nil {
		c.t.Fatal(err)
	}
	var l unstructured.UnstructuredList
	if err := l.UnmarshalJSON(raw); err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.GetName())
	}
	return out
}

// operator writes status as rancher-keycloak-operator would: a merge patch of the status
// subresource. A status "observes" the object's current generation.
func (c *cluster) operator(name string, st map[string]any) {
	c.t.Helper()
	obj := c.get(name)
	if obj == nil {
		c.t.Fatalf("operator: %s does not exist", name)
	}
	if _, set := st["observedGeneration"]; !set {
		st["observedGeneration"] = obj.GetGeneration()
	}
	c.patch(name, map[string]any{"status": st}, "status")
}

func (c *cluster) patch(name string, body map[string]any, sub ...string) {
	c.t.Helper()
	raw, _ := json.Marshal(body)
	err := c.env.Clientset.CoreV1().RESTClient().Patch(types.MergePatchType).AbsPath(c.path(name, sub...)...).Body(raw).
		Do(context.Background()).Error()
	if err != nil {
		c.t.Fatalf("patch %s %v: %v", name, sub, err)
	}
}

// create stores a custom resource as someone else would (e.g. by hand).
func (c *cluster) create(name string, labels map[string]string) {
	c.t.Helper()
	obj := map[string]any{"apiVersion": "waldur.io/v1alpha1", "kind": "ManagedRancherProject",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"clusterId": "c-m-other", "projectName": "hand-made"}}
	raw, _ := json.Marshal(obj)
	err := c.env.Clientset.CoreV1().RESTClient().Post().AbsPath("/apis/waldur.io/v1alpha1/namespaces", c.ns, "managedrancherprojects").
		Body(raw).Do(context.Background()).Error()
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) deleteByHand(name string) {
	c.t.Helper()
	if err := c.env.Clientset.CoreV1().RESTClient().Delete().AbsPath(c.path(name)...).Do(context.Background()).Error(); err != nil {
		c.t.Fatal(err)
	}
}

func sync1(t *testing.T, b *Backend, req backends.ProjectSync) backends.ProjectReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := b.SyncProjects(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// statesOf maps "user/role" to the reported state.
func statesOf(rep backends.ProjectReport) map[string]string {
	out := map[string]string{}
	for _, g := range rep.Grants {
		out[g.Username+g.UserUUID+"/"+g.Role] = g.State
	}
	return out
}
