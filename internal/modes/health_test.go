package modes

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// checking is the in-memory backend with a health check: Reconcile fails as told and Metadata
// reports what the check found, as the rke2 backend does for a cluster that cannot serve.
type checking struct {
	*inmemory.Backend
	err     error
	md      map[string]any
	updates []backends.Resource
}

func (c *checking) Reconcile(context.Context, backends.Resource) error { return c.err }

func (c *checking) Metadata(context.Context, backends.Resource) (map[string]any, error) {
	return c.md, nil
}

func (c *checking) SetLimits(ctx context.Context, res backends.Resource, limits backends.Quantities) error {
	c.updates = append(c.updates, res)
	return c.Backend.SetLimits(ctx, res, limits)
}

// A backend whose health check fails for good gets the resource marked erred with the reason,
// and its metadata (what is down) sent with it; a temporary failure changes neither; a check
// that passes again sets the resource OK with the new metadata.
func TestReconcileFailureSendsMetadataWithErred(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	be := &checking{Backend: f.be}
	f.unit.Backend = backends.RolesOf("checking", be)
	c := f.world.CreateOrder("cluster", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	uuid := f.order(c.UUID).ResourceUUID
	m := &Membership{Env: f.env}
	pass := func() waldursim.Resource {
		_ = m.RunOnce(context.Background(), f.unit)
		r, _ := f.sim.Resource(uuid)
		return r
	}
	be.err, be.md = failure.Errorf("cluster cannot serve: etcd has no quorum"), map[string]any{"health": "down"}
	if r := pass(); r.State != waldursim.ResourceErred || !strings.Contains(r.ErrorMessage, "no quorum") || r.BackendMetadata["health"] != "down" {
		t.Fatalf("after a failed check: %s %q %v", r.State, r.ErrorMessage, r.BackendMetadata)
	}
	be.err, be.md = failure.Transient(errors.New("rancher: 503")), map[string]any{"health": "unknown"}
	if r := pass(); r.State != waldursim.ResourceErred || r.BackendMetadata["health"] != "down" {
		t.Fatalf("after a temporary failure: %s %v", r.State, r.BackendMetadata)
	}
	be.err, be.md = nil, map[string]any{"health": "ok"}
	if r := pass(); r.State != waldursim.ResourceOK || r.BackendMetadata["health"] != "ok" {
		t.Fatalf("after a passing check: %s %v", r.State, r.BackendMetadata)
	}
}

// An Update order made by update_options carries no limits, only new_options: the backend is
// asked with the resource's limits and sees the options as attributes["new_options"].
func TestUpdateOptionsOrderReachesTheBackend(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	be := &checking{Backend: f.be}
	f.unit.Backend = backends.RolesOf("checking", be)
	c := f.world.CreateOrder("cluster", map[string]float64{"cpu": 2})
	f.run(&Orders{Env: f.env})
	up := f.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: f.order(c.UUID).ResourceUUID,
		Attributes: map[string]any{"new_options": map[string]any{"k8s_version": "v1.32.3+rke2r1"}}})
	f.run(&Orders{Env: f.env})
	if got := f.order(up.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("update: %s %s", got.State, got.ErrorMessage)
	}
	if len(be.updates) != 1 {
		t.Fatalf("SetLimits calls %d", len(be.updates))
	}
	opts, _ := be.updates[0].Attributes["new_options"].(map[string]any)
	if opts["k8s_version"] != "v1.32.3+rke2r1" || be.updates[0].Limits["cpu"] != 2 {
		t.Fatalf("the backend saw %+v", be.updates[0])
	}
}
