package vclusters

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSharedObjectsAreAppliedOncePerRecheck(t *testing.T) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-clusterrole-kubeapiserver"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"nodes/proxy"}, APIGroups: []string{""}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-role-binding-kubernetes-master"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: role.Name}}
	for _, c := range []struct {
		obj    runtime.Object
		shared bool
	}{
		{role, true},
		{binding, true},
		{&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: adminBindingName("vc-1")}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cattle-credentials-x", Namespace: "cluster-vc-1"}}, false},
		{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "cluster-vc-1"}}, false},
	} {
		if key, _ := (&sharedObjects{}).key(c.obj); (key != "") != c.shared {
			t.Errorf("%T: key %q, shared %v", c.obj, key, c.shared)
		}
	}

	var s sharedObjects
	key, digest := s.key(role)
	if s.fresh(key, digest) {
		t.Fatal("fresh before it was applied")
	}
	s.applied(key, digest)
	if !s.fresh(key, digest) {
		t.Fatal("not fresh right after it was applied")
	}
	changed := role.DeepCopy()
	changed.Rules[0].Verbs = []string{"get", "list"}
	if _, d := s.key(changed); s.fresh(key, d) {
		t.Fatal("a changed role counts as applied")
	}
	s.at[key] = sharedApply{digest: digest, at: time.Now().Add(-sharedRecheck)}
	if s.fresh(key, digest) {
		t.Fatal("still fresh after sharedRecheck")
	}
}
