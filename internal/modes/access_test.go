package modes

import (
	"context"
	"fmt"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// accessDown is the ping of a backend whose access service (Keycloak behind Rancher) does not
// answer while the backend itself does.
type accessDown struct{}

func (accessDown) Ping(context.Context) error {
	return fmt.Errorf("keycloak: connection refused: %w", backends.ErrAccessNotReady)
}

type accessUp struct{}

func (accessUp) Ping(context.Context) error { return nil }

// An outage of the backend's access service holds back membership changes only: orders are
// processed, resources are reconciled and their metadata published, usage is reported, and the
// log and the site_agent_backend_degraded gauge say what waits. Every mode used to skip its
// whole cycle.
func TestAccessOutageHoldsBackOnlyMembership(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	obs, logs := observer.New(zap.WarnLevel)
	f.unit.Log = zap.New(obs)
	f.unit.Backend.Pinger = accessDown{}
	degraded := func() float64 {
		var m dto.Metric
		if err := f.env.Metrics.BackendDegraded.WithLabelValues(f.unit.metricID(), "access").Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetGauge().GetValue()
	}

	o := f.world.CreateOrder("outage", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	if got := f.order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("the order waited for the access service: %s %s", got.State, got.ErrorMessage)
	}
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	f.sim.RemoveProjectMember(f.world.Project.UUID, f.world.Users[0].UUID)
	f.run(&Membership{Env: f.env})
	objs, _ := f.be.Objects()
	if !slices.Contains(objs[0].Members, "phys_alice") {
		t.Fatalf("members %v: membership changes must wait for the access service", objs[0].Members)
	}
	if got, _ := f.sim.Resource(res.UUID); len(got.BackendMetadata) == 0 {
		t.Fatal("the rest of the membership pass (metadata) was skipped")
	}
	f.unit.Backend.Usage = gauge{fixedUsage{id: res.BackendID}, 5}
	f.env.ReportingPeriods = 1
	f.run(&Report{Env: f.env})
	if u := f.sim.ComponentUsages(res.UUID); len(u) == 0 || u[0].Amount != 5 {
		t.Fatalf("usage was not reported during the outage: %+v", u)
	}
	if n := logs.FilterMessage("backend access management not ready; access changes wait, other work goes on").Len(); n != 3 || degraded() != 1 {
		t.Fatalf("%d warnings (want one per cycle), gauge %v", n, degraded())
	}

	f.unit.Backend.Pinger = accessUp{} // the access service answers again
	f.run(&Membership{Env: f.env})
	objs, _ = f.be.Objects()
	if slices.Contains(objs[0].Members, "phys_alice") || degraded() != 0 {
		t.Fatalf("members %v, gauge %v: the waiting removal was not applied", objs[0].Members, degraded())
	}
}
