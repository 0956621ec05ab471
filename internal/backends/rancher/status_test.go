package rancher

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
)

// quotaOf returns a resource's quota as "key=amount" strings and its status annotation.
func (f *fixture) quotaOf(t *testing.T, ns string) (map[string]string, string) {
	t.Helper()
	q, err := f.env.Clientset.CoreV1().ResourceQuotas(ns).Get(ctxT(t), quotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range q.Spec.Hard {
		out[string(k)] = v.String()
	}
	return out, q.Annotations[annStatus]
}

// Item 10: pause makes the real quota admit no new pods (running ones stay), downscale applies
// the limits × downscale_factor, restore puts the limits back — and Reconcile, Update and the
// limits read back for Waldur respect the temporary state instead of undoing or publishing it.
// The incumbent's pause/downscale/restore were no-ops.
func TestPauseDownscaleRestore(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(nil)
	sc, ok := be.(backends.StatusController)
	if !ok {
		t.Fatal("the rancher backend cannot pause, downscale or restore")
	}
	rec, ctx := be.(backends.Reconciler), ctxT(t)
	res := mustCreate(t, be, f.resource(1))
	ns := f.prefix + "res-1"
	f.startPods(t, ns, pod("running", "500m", "512Mi", nil))
	full := map[string]string{"limits.cpu": "2", "limits.memory": "4Gi", "requests.storage": "10Gi", "requests.nvidia.com/gpu": "1"}
	step := func(name string, apply func() error, wantHard map[string]string, wantStatus string) {
		t.Helper()
		if err := apply(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, again := range []func() error{func() error { return rec.Reconcile(ctx, res) }, apply} {
			if err := again(); err != nil {
				t.Fatalf("%s, then reconcile: %v", name, err)
			}
			hard, status := f.quotaOf(t, ns)
			if d := cmp.Diff(wantHard, hard); d != "" || status != wantStatus {
				t.Fatalf("%s: quota status %q (want %q), hard (-want +got):\n%s", name, status, wantStatus, d)
			}
		}
		lim, err := be.(backends.LimitsReader).Limits(ctx, res)
		if err != nil || !cmp.Equal(lim, res.Limits) {
			t.Fatalf("%s: limits for Waldur %v (want the resource's own %v): %v", name, lim, res.Limits, err)
		}
	}

	paused := map[string]string{"pods": "0"}
	for k, v := range full {
		paused[k] = v
	}
	step("pause", func() error { return sc.Pause(ctx, res) }, paused, "paused")
	f.expectPodRefused(t, ns, "pods")
	if _, err := f.env.Clientset.CoreV1().Pods(ns).Get(ctx, "running", metav1.GetOptions{}); err != nil {
		t.Fatalf("the running pod was touched: %v", err)
	}
	if err := be.(backends.Provisioner).SetLimits(ctx, res, res.Limits); err != nil { // an Update while paused
		t.Fatal(err)
	}
	if _, status := f.quotaOf(t, ns); status != "paused" {
		t.Fatalf("an update unpaused the resource: %q", status)
	}

	step("downscale", func() error { return sc.Downscale(ctx, res) },
		map[string]string{"limits.cpu": "1", "limits.memory": "2Gi", "requests.storage": "5Gi", "requests.nvidia.com/gpu": "0"}, "downscaled")
	f.expectPodRefused(t, ns, "limits.cpu") // 500m running + 1 core asked > 1 core

	step("restore", func() error { return sc.Restore(ctx, res) }, full, "")
	f.rs.ResetCalls()
	if err := sc.Restore(ctx, res); err != nil {
		t.Fatal(err)
	}
	if v3, k8s := f.rs.Total(); v3+k8s != 0 {
		t.Fatalf("a restore with nothing to undo sent %d requests (%v)", v3+k8s, f.rs.Calls())
	}
	poll(t, time.Minute, "a pod admitted after restore", func() (bool, error) {
		_, err := f.env.Clientset.CoreV1().Pods(ns).Create(ctx, pod("after", "1", "1Gi", nil), metav1.CreateOptions{})
		return err == nil, err
	})
	if err := be.(backends.Provisioner).Delete(ctx, res); err != nil {
		t.Fatal(err)
	}
}

// expectPodRefused waits (bounded: the quota controller catches up with the new spec) until a
// new pod asking for one core is refused for exceeding the quota on key.
func (f *fixture) expectPodRefused(t *testing.T, ns, key string) {
	t.Helper()
	poll(t, time.Minute, "a new pod refused on "+key, func() (bool, error) {
		p, err := f.env.Clientset.CoreV1().Pods(ns).Create(ctxT(t), pod("refused", "1", "1Gi", nil), metav1.CreateOptions{})
		if err == nil {
			_ = f.env.Clientset.CoreV1().Pods(ns).Delete(ctxT(t), p.Name, metav1.DeleteOptions{})
			return false, nil
		}
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && strings.Contains(err.Error(), key), err
	})
}
