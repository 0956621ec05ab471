package openstack_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// benchCreate creates b.N tenants (timed) and deletes them (not timed), reporting API calls
// per create and the per-operation latency table of the creates.
func benchCreate(b *testing.B, be *openstack.Backend, calls *counter, run string) {
	ctx := context.Background()
	var created []backends.Resource
	b.Cleanup(func() {
		for _, res := range created {
			if err := be.Delete(ctx, res); err != nil {
				b.Errorf("cleanup %s: %v", res.BackendID, err)
			}
		}
	})
	if err := be.Ping(ctx); err != nil { // connect outside the timed part
		b.Fatal(err)
	}
	calls.reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := resource(i)
		res.UUID = fmt.Sprintf("%s%026x", run, i)
		info, err := be.Create(ctx, backends.CreateRequest{Resource: res, Name: fmt.Sprintf("bench-%s-%d", run, i)})
		if err != nil {
			b.Fatal(err)
		}
		res.BackendID = info.BackendID
		created = append(created, res)
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.n.Load())/float64(b.N), "calls/op")
	b.Logf("N=%d, per-call latency (count × mean, operation):\n%s", b.N, calls.table())
}

func BenchmarkCreateTenantSim(b *testing.B) {
	env := startSim(b, openstacksim.Options{})
	c := newCounter()
	benchCreate(b, env.backend(b, backendOpts{transport: c}), c, "abcdef")
}

// Run with -benchtime=5x: every create builds a real tenant (router included).
func BenchmarkCreateTenantReal(b *testing.B) {
	r := loadReal(b)
	be := r.backend(b, backendOpts{})
	benchCreate(b, be.Backend, be.calls, r.run)
}

// benchUsage measures usage passes over the given tenants.
func benchUsage(b *testing.B, be *openstack.Backend, calls *counter, tenants []backends.Resource) {
	ctx := context.Background()
	calls.reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := be.Usage(ctx, tenants, backends.Period{}, true)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != len(tenants) {
			b.Fatalf("usage of %d tenants, want %d", len(got), len(tenants))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.n.Load())/float64(b.N), "calls/op")
	b.Logf("N=%d, per-call latency (count × mean, operation):\n%s", b.N, calls.table())
}

// A usage pass over 200 complete tenants in the simulator.
func BenchmarkUsagePass200Sim(b *testing.B) {
	env := startSim(b, openstacksim.Options{})
	c := newCounter()
	be := env.backend(b, backendOpts{transport: c})
	tenants := make([]backends.Resource, 200)
	for i := range tenants {
		tenants[i] = create(b, be, resource(i), fmt.Sprintf("u%03d", i))
	}
	benchUsage(b, be, c, tenants)
}

// A usage pass over 200 real Keystone projects with quotas (bare projects: usage reads only
// the three quota-usage APIs, which do not care whether a tenant has a router).
func BenchmarkUsagePass200Real(b *testing.B) {
	r := loadReal(b)
	be := r.backend(b, backendOpts{})
	ctx := context.Background()
	tenants := make([]backends.Resource, 200)
	start := time.Now()
	for i := range tenants {
		p, err := projects.Create(ctx, r.identity, projects.CreateOpts{Name: fmt.Sprintf("sa-%s-usage-%03d", r.run, i), DomainID: "default"}).Extract()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = projects.Delete(context.Background(), r.identity, p.ID).ExtractErr() })
		tenants[i] = backends.Resource{UUID: fmt.Sprintf("%032x", i), BackendID: p.ID}
	}
	b.Logf("created 200 projects in %s", time.Since(start).Round(time.Millisecond))
	benchUsage(b, be.Backend, be.calls, tenants)
}
