package vclusters

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// fuzzManifest is a small import manifest of the shape Rancher hands out (see
// internal/sim/ranchersim/manifest.go): the objects the transform keeps, moves and leaves out.
const fuzzManifest = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: proxy-clusterrole-kubeapiserver}
rules: [{apiGroups: [""], resources: [nodes/proxy], verbs: [get]}]
---
apiVersion: v1
kind: Namespace
metadata: {name: cattle-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: cattle, namespace: cattle-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cattle-admin-binding, labels: {cattle.io/creator: norman}}
subjects: [{kind: ServiceAccount, name: cattle, namespace: cattle-system}]
roleRef: {kind: ClusterRole, name: cattle-admin, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: v1
kind: Secret
metadata: {name: cattle-credentials-0123456789, namespace: cattle-system}
type: Opaque
data: {url: aHR0cHM6Ly9yYW5jaGVy, token: dG9rZW4=}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb, namespace: kube-system}
subjects: [{kind: ServiceAccount, name: cattle, namespace: cattle-system}]
roleRef: {kind: Role, name: r, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cattle-cluster-agent, namespace: cattle-system}
`

// FuzzTransformManifest feeds arbitrary YAML where Rancher's import manifest is expected (the
// upstream writes it): the transform never panics, and what it keeps lives in the tenant's
// namespace — every namespaced object, every retargeted subject — under the tenant's names.
func FuzzTransformManifest(f *testing.F) {
	f.Add([]byte(fuzzManifest))
	f.Add([]byte(strings.ReplaceAll(fuzzManifest, "cattle-system", "kube-system")))
	f.Add([]byte("# only a comment\n---\n---\n"))
	f.Add([]byte("kind: [\n"))
	f.Add([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: cattle-credentials-x}\n"))
	rec := Record{Name: "vc-fuzz", ID: "vc-1"}
	tenant := TenantNamespace(rec.Name)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := transformManifest(data, rec)
		if err != nil {
			return
		}
		if m.credentials == "" {
			t.Fatal("accepted without a cattle-credentials Secret")
		}
		for _, obj := range m.objects {
			acc, err := metaOf(obj)
			if err != nil {
				t.Fatalf("%T: %v", obj, err)
			}
			switch o := obj.(type) {
			case *rbacv1.ClusterRole:
			case *rbacv1.ClusterRoleBinding:
				if o.Name == "cattle-admin-binding" {
					t.Fatal("the shared cattle-admin-binding kept its name")
				}
				if o.Name == adminBindingName(rec.Name) {
					checkSubjects(t, o.Subjects, tenant)
				}
			default:
				if rb, ok := o.(*rbacv1.RoleBinding); ok {
					checkSubjects(t, rb.Subjects, tenant)
				}
				if acc.GetNamespace() != tenant {
					t.Fatalf("%T %s kept namespace %q, want %q", obj, acc.GetName(), acc.GetNamespace(), tenant)
				}
			}
		}
	})
}

// checkSubjects: the agent's service accounts (in cattle-system) are the tenant's now.
func checkSubjects(t *testing.T, subjects []rbacv1.Subject, tenant string) {
	t.Helper()
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == agentNamespace {
			t.Fatalf("subject %s/%s not moved to %s", s.Namespace, s.Name, tenant)
		}
	}
}
