package backends

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestLogCarriesTheContextFields(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	base := zap.New(core).With(zap.String("backend", "b"))
	Log(context.Background(), base).Info("no fields")
	ctx := ForOrder(context.Background(), "o1", "r1")
	Log(ctx, base).Info("order")
	Log(ForResource(ctx, "r2"), base).Info("replaced")
	Log(ForOrder(context.Background(), "o3", ""), base).Info("no resource yet")
	want := []map[string]any{
		{"backend": "b"},
		{"backend": "b", OrderUUIDField: "o1", ResourceUUIDField: "r1"},
		{"backend": "b", OrderUUIDField: "o1", ResourceUUIDField: "r2"},
		{"backend": "b", OrderUUIDField: "o3"},
	}
	entries := logs.All()
	if len(entries) != len(want) {
		t.Fatalf("%d entries", len(entries))
	}
	for i, e := range entries {
		got := e.ContextMap()
		if len(got) != len(want[i]) {
			t.Errorf("%q: fields %v, want %v", e.Message, got, want[i])
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", e.Message, k, got[k], v)
			}
		}
	}
}
