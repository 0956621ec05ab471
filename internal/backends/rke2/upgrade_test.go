package rke2

import (
	"context"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

func TestCheckUpgrade(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"v1.31.7+rke2r1", "v1.31.7+rke2r1", ""},
		{"v1.31.7+rke2r1", "v1.31.9+rke2r1", ""},
		{"v1.31.7+rke2r1", "v1.31.7+rke2r2", ""},
		{"v1.31.7+rke2r1", "v1.32.3+rke2r1", ""},
		{"v1.31.7+rke2r1", "v1.33.0+rke2r1", "skips v1.32"},
		{"v1.31.7+rke2r1", "v1.30.9+rke2r1", "cannot be downgraded"},
		{"v1.31.7+rke2r2", "v1.31.7+rke2r1", "cannot be downgraded"},
		{"v1.31.7+rke2r1", "1.32", "is not an RKE2 release"},
		{"v1.31.7+rke2r1", "v1.32.3+k3s1", "is not an RKE2 release"},
	}
	for _, c := range cases {
		err := CheckUpgrade(c.from, c.to)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
		if _, public := failure.PublicMessage(err); err != nil && !public {
			t.Errorf("%s → %s: not a public reason: %v", c.from, c.to, err)
		}
	}
}

func upgradeOrder(res backends.Resource, version string) backends.Resource {
	attrs := map[string]any{}
	for k, v := range res.Attributes {
		attrs[k] = v
	}
	attrs["new_options"] = map[string]any{"k8s_version": version}
	res.Attributes = attrs
	return res
}

// Issue 17 item 11: an Update order asking for the next minor release has Rancher roll the
// cluster — servers first, one node at a time in the in-memory world — and stays executing
// until every node is Ready on it; the resource's metadata then shows the release. A
// downgrade or a skipped minor version errs the order with the reason (the evaluator rejects
// both before approval).
func TestUpgradeOrder(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			w := newMemWorld(t, 11)
			res := readyCluster(t, w, "bootstrap", mode)
			b := func() *Backend { return memBackend(t, w, "bootstrap", mode, "upgrade_agent_batch", 2) }
			const next = "v1.32.3+rke2r1"
			for _, bad := range []string{"v1.30.9+rke2r1", "v1.33.1+rke2r1"} {
				err := b().SetLimits(context.Background(), upgradeOrder(res, bad), res.Limits)
				if _, public := failure.PublicMessage(err); !public || failure.IsTransient(err) {
					t.Fatalf("an order for %s: %v", bad, err)
				}
				dec, why, err := b().Evaluate(context.Background(), backends.OrderReview{Type: "Update",
					Resource: backends.Resource{UUID: res.UUID, Limits: res.Limits, Attributes: upgradeOrder(res, bad).Attributes}})
				if err != nil || dec != backends.Reject || why == "" {
					t.Fatalf("evaluating %s: %v %q %v", bad, dec, why, err)
				}
			}
			if dec, _, err := b().Evaluate(context.Background(), backends.OrderReview{Type: "Update",
				Resource: backends.Resource{UUID: res.UUID, Limits: res.Limits, Attributes: upgradeOrder(res, next).Attributes}}); dec != backends.Accept || err != nil {
				t.Fatalf("evaluating %s: %v %v", next, dec, err)
			}
			cyclesUntilDone(t, w, "upgrade", func() error { return b().SetLimits(context.Background(), upgradeOrder(res, next), res.Limits) })
			w.mu.Lock()
			order := strings.Join(w.upgraded, " ")
			strategy := w.clusters[testCluster].spec.Upgrade
			w.mu.Unlock()
			if order != "prod-server-0 prod-server-1 prod-server-2 prod-agent-0 prod-agent-1" || strategy.AgentBatch != 2 {
				t.Fatalf("upgraded in the order %q with %+v", order, strategy)
			}
			hb := b()
			err, md := healthPass(hb, res)
			if err != nil || md["k8s_version"] != next || nodeMeta(md, "prod-agent-1")["version"] != next || md["stage"] != ClusterReady {
				t.Fatalf("after the upgrade: %v %v", err, md)
			}
			err = b().SetLimits(context.Background(), upgradeOrder(res, "v1.31.7+rke2r1"), res.Limits)
			if err == nil || !strings.Contains(err.Error(), "cannot be downgraded") {
				t.Fatalf("back to the old release: %v", err)
			}
		})
	}
}

// A changed k8s_version setting is rolled out by health passes to a settled cluster one minor
// version behind; a setting two minor versions ahead is reported, not applied.
func TestSettingChangeUpgradesClusters(t *testing.T) {
	w := newMemWorld(t, 13)
	res := readyCluster(t, w)
	far := memBackend(t, w, "k8s_version", "v1.33.0+rke2r1")
	err, md := healthPass(far, res)
	if err != nil || !strings.Contains(md["k8s_version_setting"].(string), "skips v1.32") || w.calls["SetK8sVersion"] != 0 {
		t.Fatalf("a setting two minor versions ahead: %v %v", err, md)
	}
	b := memBackend(t, w, "k8s_version", "v1.32.3+rke2r1")
	err, md = healthPass(b, res)
	if err != nil || md["stage"] != "upgrading" || w.calls["SetK8sVersion"] != 1 {
		t.Fatalf("the first pass after the setting changed: %v %v", err, md)
	}
	for range 40 {
		w.tick()
		if err, md = healthPass(b, res); err == nil && md["stage"] == ClusterReady {
			break
		}
	}
	if md["k8s_version"] != "v1.32.3+rke2r1" || len(w.upgraded) != 5 || w.calls["SetK8sVersion"] != 1 {
		t.Fatalf("after the rollout: %v, upgraded %v, asked %d times", md, w.upgraded, w.calls["SetK8sVersion"])
	}
}
