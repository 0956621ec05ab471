package rancher

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/backends"
)

// Every line the backend logs while working for an order names the order and its resource
// (the fields the caller put in the context): creation with its project, namespace, Keycloak
// group and binding, a limits change, and the deletion with its namespaces and group.
func TestBackendLogLinesNameTheOrderAndResource(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	core, logs := observer.New(zapcore.DebugLevel)
	f.logger = zap.New(core)
	be := f.backend(nil).(backends.Provisioner)
	res := f.resource(1)
	steps := []struct {
		order string
		do    func(ctx context.Context) error
	}{
		{"0rder-create", func(ctx context.Context) error {
			info, err := be.Create(ctx, backends.CreateRequest{Resource: res, Name: res.Slug, Members: []backends.Member{{Username: "alice"}}})
			res.BackendID = info.BackendID
			return err
		}},
		{"0rder-update", func(ctx context.Context) error {
			return be.SetLimits(ctx, res, backends.Quantities{"cpu": 3, "ram": 4, "storage": 10, "gpu": 1})
		}},
		{"0rder-terminate", func(ctx context.Context) error { return be.Delete(ctx, res) }},
	}
	for _, s := range steps {
		logs.TakeAll()
		if err := s.do(backends.ForOrder(ctxT(t), s.order, res.UUID)); err != nil {
			t.Fatalf("%s: %v", s.order, err)
		}
		lines := logs.TakeAll()
		if s.order != "0rder-update" && len(lines) == 0 {
			t.Fatalf("%s: the backend logged nothing", s.order)
		}
		for _, e := range lines {
			fields := e.ContextMap()
			if fields[backends.OrderUUIDField] != s.order || fields[backends.ResourceUUIDField] != res.UUID {
				t.Errorf("%s: line %q lacks the order or resource: %v", s.order, e.Message, fields)
			}
		}
		t.Logf("%s: %d backend lines, each naming the order and the resource", s.order, len(lines))
	}
}
