package kubeenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkDefaultServiceAccount checks once whether the "default" ServiceAccount of namespace
// exists; the ServiceAccount admission plugin rejects pods until it does.
func (e *Env) checkDefaultServiceAccount(ctx context.Context, namespace string) error {
	_, err := e.Clientset.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
	return err
}

// WaitPodsAdmissible polls (bounded by timeout) until pods can be created in namespace, i.e.
// its "default" ServiceAccount exists.
func (e *Env) WaitPodsAdmissible(ctx context.Context, namespace string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.cluster.poll(ctx, `ServiceAccount "default" in `+namespace, 50*time.Millisecond,
		func(ctx context.Context) error { return e.checkDefaultServiceAccount(ctx, namespace) })
}

// Namespace creates a namespace named "<prefix>-<random>" with the labels and deletes it at
// cleanup (the namespace controller then removes its contents). It gives tests sharing an Env
// their own space. It does not wait for the default ServiceAccount: see WaitPodsAdmissible.
func (e *Env) Namespace(t testing.TB, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: strings.TrimSuffix(prefix, "-") + "-",
		Labels:       labels,
	}}
	created, err := e.Clientset.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubeenv: create namespace %q: %v", prefix, err)
		return ""
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := e.Clientset.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubeenv: delete namespace %s: %v", created.Name, err)
		}
	})
	return created.Name
}

// RSS reports the resident memory of each running process in bytes, keyed by process name
// (etcd, kube-apiserver, kube-controller-manager).
func (e *Env) RSS() map[string]int64 {
	procs := e.cluster.cp.Processes()
	out := make(map[string]int64, len(procs))
	for _, p := range procs {
		out[p.Name] = RSSBytes(p.Pid())
	}
	return out
}
