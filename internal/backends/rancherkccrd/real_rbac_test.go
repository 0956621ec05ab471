package rancherkccrd

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/waldur/site-agent/internal/backends"
)

// The RBAC of configs/rancher-kc-crd/rbac.yaml is what the backend needs, and no more: with a
// token of its ServiceAccount a full sync works (create, replace, list, delete), and the
// status subresource, which only the operator writes, is refused.
func TestRBACOfConfigsIsEnough(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	token := c.applyRBAC(t)
	admin := c.backend(nil)
	sync1(t, admin, realRequest()) // someone else's leftovers are pruned by the agent below
	c.create("adamas-stale", map[string]string{labelResource: realRes.UUID})
	b, _, err := New(backends.Params{Settings: backends.Settings{"kubeconfig_path": c.kubeconfig(token), "context": "aio-rancher",
		"namespace": c.ns, "role_map": map[string]any{"project_member": "project-member"}}})
	if err != nil {
		t.Fatal(err)
	}
	agent := b.(*Backend)
	if err := agent.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	req := realRequest()
	req.Projects[0].Name = "renamed by the agent"
	sync1(t, agent, req)
	if names := c.names(); len(names) != 2 {
		t.Fatalf("after the agent's sync: %v", names)
	}
	for _, check := range agent.diagnose(ctx) {
		if !check.OK {
			t.Errorf("diagnostics: %s: %s", check.Name, check.Detail)
		}
	}
	q, err := agent.kube.request(http.MethodPatch)
	if err != nil {
		t.Fatal(err)
	}
	err = q.Name("adamas-aaaaaaaa").SubResource("status").SetHeader("Content-Type", "application/merge-patch+json").
		Body([]byte(`{"status":{"phase":"Ready"}}`)).Do(ctx).Error()
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("the agent's identity may write status: %v", err)
	}
	other, _, _ := New(backends.Params{Settings: backends.Settings{"kubeconfig_path": c.kubeconfig(token), "context": "aio-rancher",
		"namespace": "default"}})
	if err := other.(*Backend).Ping(ctx); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("ping outside the Role's namespace: %v", err)
	}
}

// applyRBAC creates the ServiceAccount, Role and RoleBinding of configs/ in the test's
// namespace and returns a token of the ServiceAccount.
func (c *cluster) applyRBAC(t *testing.T) string {
	raw, err := os.ReadFile("../../../configs/rancher-kc-crd/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := c.env.Clientset
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ServiceAccount":
			var sa corev1.ServiceAccount
			must(t, yaml.Unmarshal([]byte(doc), &sa))
			sa.Namespace = c.ns
			_, err = cs.CoreV1().ServiceAccounts(c.ns).Create(ctx, &sa, metav1.CreateOptions{})
		case "Role":
			var r rbacv1.Role
			must(t, yaml.Unmarshal([]byte(doc), &r))
			r.Namespace = c.ns
			_, err = cs.RbacV1().Roles(c.ns).Create(ctx, &r, metav1.CreateOptions{})
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			must(t, yaml.Unmarshal([]byte(doc), &rb))
			rb.Namespace, rb.Subjects[0].Namespace = c.ns, c.ns
			_, err = cs.RbacV1().RoleBindings(c.ns).Create(ctx, &rb, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected kind %q in rbac.yaml", meta.Kind)
		}
		must(t, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(c.ns).CreateToken(ctx, "site-agent", &authv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err)
	return tr.Status.Token
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
