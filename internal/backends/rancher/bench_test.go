package rancher

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// counts are requests seen by the simulators.
type counts struct{ v3, k8s, kc int }

func (f *fixture) counts() counts {
	v3, k8s := f.rs.Total()
	c := counts{v3: v3, k8s: k8s}
	if f.kc != nil {
		for _, n := range f.kc.Calls() { // admin routes and the token endpoint
			c.kc += n
		}
	}
	return c
}

func (f *fixture) resetCounts() {
	f.rs.ResetCalls()
	if f.kc != nil {
		f.kc.ResetCalls()
	}
}

func report(b *testing.B, c counts, per float64, unit string) {
	b.ReportMetric(float64(c.v3)/per, "rancher-v3/"+unit)
	b.ReportMetric(float64(c.k8s)/per, "k8s-proxy/"+unit)
	b.ReportMetric(float64(c.kc)/per, "keycloak/"+unit)
}

// BenchmarkCreate counts the requests one Create order makes to Rancher (v3 and the Kubernetes
// proxy) and Keycloak, in a process that has already pinged (schemas loaded, token cached),
// amortised over the b.N orders of one pass (the cluster's projects are listed once per pass).
// "new group": every order is the first of its Waldur project (a group is created and the
// member added); "shared group": the orders of one Waldur project whose team is in the group
// already (one member read per pass). The incumbent made 5 Rancher requests with Keycloak off
// (and no retries, reconciliation or ownership checks).
func BenchmarkCreate(b *testing.B) {
	for _, tc := range []struct {
		name      string
		kc, share bool
	}{{"keycloak=false", false, false}, {"keycloak=true/new group", true, false}, {"keycloak=true/shared group", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixture(b, fixtureOpts{kube: true, keycloak: tc.kc})
			if tc.kc {
				f.kc.AddUser("alice")
			}
			be := f.backend(nil)
			if err := be.(backends.Pinger).Ping(ctxT(b)); err != nil {
				b.Fatal(err)
			}
			var made []backends.Resource
			if tc.share { // the team joined the group with an earlier resource of the project
				made = append(made, mustCreate(b, be, f.resource(9999), backends.Member{Username: "alice"}))
				core(be).newPass()
			}
			f.resetCounts()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := f.resource(i)
				if !tc.share {
					res.ProjectSlug = fmt.Sprintf("proj-%d", i) // a new group each time: the expensive case
				}
				made = append(made, mustCreate(b, be, res, backends.Member{Username: "alice"}))
			}
			b.StopTimer()
			report(b, f.counts(), float64(b.N), "create")
			for _, res := range made {
				if err := be.(backends.Provisioner).Delete(ctxT(b), res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScale500 builds 500 resources (10 Waldur projects, so 10 Keycloak groups) and
// measures a membership pass when nothing changed (Reconcile, Members, Limits, Metadata per
// resource, as the membership mode calls them; "member-reads" counts GET groups/{id}/members)
// and a report pass.
func BenchmarkScale500(b *testing.B) {
	const n = 500
	f := newFixture(b, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	be := f.backend(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	resources := make([]backends.Resource, n)
	forEach(n, 8, func(i int) {
		res := f.resource(i)
		res.ProjectSlug = fmt.Sprintf("proj-%d", i%10)
		resources[i] = mustCreate(b, be, res, backends.Member{Username: "alice"})
	})
	b.Logf("created %d resources in %s", n, time.Since(start).Round(time.Millisecond))
	b.Cleanup(func() {
		forEach(n, 8, func(i int) { _ = be.(backends.Provisioner).Delete(ctx, resources[i]) })
	})
	pass := func(be backends.Backend) { membershipPass(ctx, b, be, resources) }
	b.Run("membership pass/warm process", func(b *testing.B) {
		pass(be)
		f.resetCounts()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pass(be)
		}
		report(b, f.counts(), float64(b.N), "pass")
		b.ReportMetric(float64(f.kc.Calls()[keycloaksim.RouteMembers])/float64(b.N), "member-reads/pass")
	})
	b.Run("membership pass/new process", func(b *testing.B) {
		f.resetCounts()
		for i := 0; i < b.N; i++ {
			pass(f.backend(nil)) // e.g. --once from cron, or the first pass after a restart
		}
		report(b, f.counts(), float64(b.N), "pass")
	})
	for _, source := range []string{UsageFromQuota, UsageFromPods} {
		b.Run("report pass/"+source, func(b *testing.B) {
			rb := f.backend(map[string]any{"usage_source": source})
			f.resetCounts()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got, err := rb.(backends.UsageReporter).Usage(ctx, resources, backends.PeriodOf(time.Now()), true)
				if err != nil || len(got) != n {
					b.Fatalf("usage of %d resources, err %v", len(got), err)
				}
			}
			report(b, f.counts(), float64(b.N), "pass")
		})
	}
}

// membershipPass calls what the membership mode calls for each resource when nothing changed.
func membershipPass(ctx context.Context, b testing.TB, be backends.Backend, resources []backends.Resource) {
	core(be).newPass() // the previous pass's listing and member lists are stale
	forEach(len(resources), 8, func(i int) {
		res := resources[i]
		if err := be.(backends.Reconciler).Reconcile(ctx, res); err != nil {
			b.Error(err)
		}
		if got, err := be.(backends.MembershipManager).Members(ctx, res); err != nil || len(got) != 1 {
			b.Errorf("members %v %v", got, err)
		}
		if _, err := be.(backends.LimitsReader).Limits(ctx, res); err != nil {
			b.Error(err)
		}
		if _, err := be.(backends.MetadataReader).Metadata(ctx, res); err != nil {
			b.Error(err)
		}
	})
}

// forEach runs fn(0..n-1) on workers goroutines.
func forEach(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
