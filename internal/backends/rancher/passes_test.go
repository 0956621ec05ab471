package rancher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// Item 9: a membership pass (Reconcile then Members per resource, eight at a time, as the mode
// calls them) over resources that share Keycloak groups reads each group's members once: 60
// resources of 6 Waldur projects cost 6 member reads (it was one per resource).
func TestMemberReadsOncePerGroupAndPass(t *testing.T) {
	const n, groups = 60, 6
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	be := f.backend(nil)
	resources := make([]backends.Resource, n)
	forEach(n, 4, func(i int) {
		res := f.resource(i)
		res.ProjectSlug = fmt.Sprintf("proj-%d", i%groups)
		resources[i] = mustCreate(t, be, res, backends.Member{Username: "alice"})
	})
	t.Cleanup(func() {
		forEach(n, 4, func(i int) { _ = be.(backends.Provisioner).Delete(context.Background(), resources[i]) })
	})
	for pass := 1; pass <= 2; pass++ {
		core(be).newPass()
		f.kc.ResetCalls()
		membershipPass(ctxT(t), t, be, resources)
		if got := f.kc.Calls()[keycloaksim.RouteMembers]; got != groups {
			t.Fatalf("pass %d: %d member reads for %d resources in %d groups, want %d", pass, got, n, groups, groups)
		}
	}
}

// Item 2: while Keycloak does not answer, quotas are still reconciled, usage is reported, and a
// new resource gets its project, namespace and quota (its access is left for when Keycloak is
// back, with a transient error wrapping backends.ErrAccessNotReady and the project id recorded);
// once Keycloak answers, the retried Create completes the access.
func TestKeycloakOutageLetsQuotasAndUsageGoOn(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	be := f.backend(nil, WithInventoryTTL(0))
	ctx := ctxT(t)
	res := mustCreate(t, be, f.resource(1), backends.Member{Username: "alice"})
	f.kc.SetFaults(keycloaksim.Faults{Rate: 1, Seed: 3, Kinds: []keycloaksim.FaultKind{keycloaksim.Fault503}})
	if err := be.(backends.Pinger).Ping(ctx); !errors.Is(err, backends.ErrAccessNotReady) {
		t.Fatalf("ping: %v", err)
	}
	ns := f.prefix + "res-1"
	if err := f.env.Clientset.CoreV1().ResourceQuotas(ns).Delete(ctx, quotaName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := be.(backends.Reconciler).Reconcile(ctx, res); err != nil {
		t.Fatalf("reconcile while keycloak is down: %v", err)
	}
	if _, err := f.env.Clientset.CoreV1().ResourceQuotas(ns).Get(ctx, quotaName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the quota was not repaired: %v", err)
	}
	if _, err := be.(backends.UsageReporter).Usage(ctx, []backends.Resource{res}, backends.PeriodOf(time.Now()), true); err != nil {
		t.Fatalf("usage while keycloak is down: %v", err)
	}
	next := f.resource(2)
	info, err := be.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: next, Name: next.Slug,
		Members: []backends.Member{{Username: "alice"}}})
	if !errors.Is(err, backends.ErrAccessNotReady) || !failure.IsTransient(err) || info.BackendID == "" {
		t.Fatalf("create while keycloak is down: %+v %v", info, err)
	}
	t.Logf("reconcile, usage and the rancher part of a create took %s with keycloak down", time.Since(start).Round(time.Millisecond))
	if _, err := f.env.Clientset.CoreV1().ResourceQuotas(f.prefix+"res-2").Get(ctx, quotaName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the new resource's quota: %v", err)
	}
	f.kc.SetFaults(keycloaksim.Faults{})
	if err := be.(backends.Pinger).Ping(ctx); err != nil {
		t.Fatal(err)
	}
	next.BackendID = info.BackendID
	if _, err := be.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: next, Name: next.Slug,
		Members: []backends.Member{{Username: "alice"}}}); err != nil {
		t.Fatalf("the retried create: %v", err)
	}
	if got := f.bindingsOf(next.BackendID); len(got) != 1 {
		t.Fatalf("bindings after keycloak came back: %v", got)
	}
	for _, r := range []backends.Resource{res, next} {
		if err := be.(backends.Provisioner).Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}
