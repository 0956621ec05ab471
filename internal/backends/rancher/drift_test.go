package rancher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// driftWorld is a resource with every guarded object, and a way to check them all.
type driftWorld struct {
	f         *fixture
	res       backends.Resource
	ns        string
	groupPath string
	hard      corev1.ResourceList
	other     *Backend // a second client, to break things without warming the first one's caches
}

func (w *driftWorld) check(ctx context.Context) error {
	cs := w.f.env.Clientset
	n, err := cs.CoreV1().Namespaces().Get(ctx, w.ns, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("namespace: %w", err)
	}
	if n.Labels["gpu-pool"] != "h100-2x" || n.Labels[psaEnforce] != "restricted" || n.Annotations[projectIDKey] != w.res.BackendID {
		return fmt.Errorf("namespace labels %v annotations %v", n.Labels, n.Annotations)
	}
	q, err := cs.CoreV1().ResourceQuotas(w.ns).Get(ctx, quotaName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	if !sameHard(q.Spec.Hard, w.hard) {
		return fmt.Errorf("quota hard %v", q.Spec.Hard)
	}
	if _, ok := w.f.kc.GroupID(w.groupPath); !ok {
		return fmt.Errorf("group %s missing: %v", w.groupPath, w.f.kc.Groups())
	}
	for _, bd := range w.f.rs.Bindings() {
		if bd.ProjectID == w.res.BackendID && bd.GroupPrincipalID == principal(scopedGroupName(w.f.cluster, "proj", "workloads-manage")) {
			return nil
		}
	}
	return fmt.Errorf("binding missing:\n%s", w.f.rs)
}

// breakers are the ways drift happens, one at a time.
func (w *driftWorld) breakers(ctx context.Context, rec backends.Reconciler) []struct {
	name string
	fn   func(t *testing.T)
} {
	cs := w.f.env.Clientset
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"namespace deleted", func(t *testing.T) {
			if err := cs.CoreV1().Namespaces().Delete(ctx, w.ns, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := rec.Reconcile(ctx, w.res); err != nil && !failure.IsTransient(err) {
				t.Fatalf("reconcile of a terminating namespace must be transient: %v", err)
			}
			poll(t, time.Minute, "namespace deletion", func() (bool, error) {
				_, err := cs.CoreV1().Namespaces().Get(ctx, w.ns, metav1.GetOptions{})
				return apierrors.IsNotFound(err), err
			})
		}},
		{"quota deleted", func(t *testing.T) {
			if err := cs.CoreV1().ResourceQuotas(w.ns).Delete(ctx, quotaName, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"quota changed", func(t *testing.T) {
			err := retry.RetryOnConflict(retry.DefaultBackoff, func() error { // the quota controller writes status meanwhile
				q, err := cs.CoreV1().ResourceQuotas(w.ns).Get(ctx, quotaName, metav1.GetOptions{})
				if err == nil {
					q.Spec.Hard["limits.cpu"], q.Spec.Hard["pods"] = resource.MustParse("100"), resource.MustParse("5")
					_, err = cs.CoreV1().ResourceQuotas(w.ns).Update(ctx, q, metav1.UpdateOptions{})
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"labels and project assignment changed", func(t *testing.T) {
			err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
				n, err := cs.CoreV1().Namespaces().Get(ctx, w.ns, metav1.GetOptions{})
				if err == nil {
					delete(n.Labels, "gpu-pool")
					n.Labels[psaEnforce] = "privileged"
					_, err = cs.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"group deleted", func(t *testing.T) {
			id, _ := w.f.kc.GroupID(w.groupPath)
			if err := w.other.kc.DeleteGroup(ctx, id); err != nil {
				t.Fatal(err)
			}
		}},
		{"binding deleted", func(t *testing.T) {
			for _, bd := range w.f.rs.Bindings() {
				w.f.rs.RemoveBinding(bd.ID)
			}
		}},
	}
}

// Everything Reconcile guards is broken behind the agent's back, one thing at a time, and must
// be back after one Reconcile; a Reconcile with nothing to do writes nothing.
func TestReconcileRepairsDrift(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	be := f.backend(map[string]any{"namespace_labels": map[string]any{"gpu-pool": "h100-2x"}}, WithInventoryTTL(0))
	w := &driftWorld{f: f, res: mustCreate(t, be, f.resource(1), backends.Member{Username: "alice"}), ns: f.prefix + "res-1",
		groupPath: "/" + parentGroupName(f.cluster) + "/" + scopedGroupName(f.cluster, "proj", "workloads-manage"), other: core(f.backend(nil)),
		hard: corev1.ResourceList{"limits.cpu": resource.MustParse("2"), "limits.memory": resource.MustParse("4Gi"),
			"requests.storage": resource.MustParse("10Gi"), "requests.nvidia.com/gpu": resource.MustParse("1")}}
	rec, mm := be.(backends.Reconciler), be.(backends.MembershipManager)
	ctx := ctxT(t)
	if err := w.check(ctx); err != nil {
		t.Fatalf("after create: %v", err)
	}
	for _, st := range w.breakers(ctx, rec) {
		t.Run(st.name, func(t *testing.T) {
			st.fn(t)
			if err := rec.Reconcile(ctx, w.res); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if err := w.check(ctx); err != nil {
				t.Fatalf("not repaired: %v", err)
			}
		})
	}
	// A re-created group has lost its members: the membership diff puts them back.
	if got, err := mm.Members(ctx, w.res); err != nil || len(got) != 0 {
		t.Fatalf("members of the re-created group: %v %v", got, err)
	}
	if err := mm.AddMembers(ctx, w.res, []backends.Member{{Username: "alice"}}); err != nil {
		t.Fatal(err)
	}
	if got := f.kc.Groups()[w.groupPath]; !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("group members %v", got)
	}
	f.rs.ResetCalls()
	if err := rec.Reconcile(ctx, w.res); err != nil {
		t.Fatal(err)
	}
	for op := range f.rs.Calls() {
		if !strings.HasSuffix(op, ".list") && !strings.HasSuffix(op, ".get") && op != "k8s.GET" {
			t.Errorf("reconcile without drift wrote: %v", f.rs.Calls())
		}
	}
	if err := be.(backends.Provisioner).Delete(ctx, w.res); err != nil {
		t.Fatal(err)
	}
}

// A project deleted in Rancher cannot be re-created under its id: Reconcile says so in words
// a Waldur user understands, and it is not retried as if transient.
func TestReconcileVanishedProject(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(nil, WithInventoryTTL(0))
	res := mustCreate(t, be, f.resource(1))
	f.rs.RemoveProjectRecord(res.BackendID)
	err := be.(backends.Reconciler).Reconcile(ctxT(t), res)
	msg, public := failure.PublicMessage(err)
	if !public || failure.IsTransient(err) || !strings.Contains(msg, "no longer exists") || !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("want a permanent, public not-found error, got %v", err)
	}
	if _, err := be.(backends.LimitsReader).Limits(ctxT(t), res); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("limits of a vanished project: %v", err)
	}
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatalf("terminating a vanished project must succeed: %v", err)
	}
	if _, err := f.env.Clientset.CoreV1().Namespaces().Get(ctxT(t), f.prefix+"res-1", metav1.GetOptions{}); err == nil {
		n, _ := f.env.Clientset.CoreV1().Namespaces().Get(ctxT(t), f.prefix+"res-1", metav1.GetOptions{})
		if n.DeletionTimestamp == nil {
			t.Fatal("the leftover namespace of the vanished project was not deleted")
		}
	}
}
