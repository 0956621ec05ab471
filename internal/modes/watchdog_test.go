package modes

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// hangingMode's cycle ignores its context until released: a backend call that never returns.
type hangingMode struct{ release chan struct{} }

func (hangingMode) Name() string { return "order_process" }

func (m hangingMode) RunOnce(context.Context, *Unit) error {
	<-m.release
	return nil
}

// The heartbeat keeps beating while a cycle hangs, and the watchdog reports the hanging cycle
// once it has outlived its timeout and the stop grace — then forgets it when it ends.
func TestHeartbeatBeatsWhileACycleHangsAndTheWatchdogReportsIt(t *testing.T) {
	hbPath := filepath.Join(t.TempDir(), "hb")
	m := telemetry.NewMetrics()
	mode := hangingMode{release: make(chan struct{})}
	r := &Runner{Env: &Env{Metrics: m, Heartbeat: telemetry.NewHeartbeat(hbPath), Log: zap.NewNop()}, Mode: mode,
		Units: []*Unit{{Offering: config.Offering{Name: "HPC", UUID: hpcUUID}, Log: zap.NewNop()}}, Period: time.Hour,
		Timeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond, Tick: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, nil) }()
	defer func() {
		cancel()
		<-done
	}()
	deadline := time.Now().Add(10 * time.Second)
	for r.Stuck() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the hanging cycle was never reported stuck")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Stuck(); !strings.Contains(err.Error(), `"HPC" running for`) || !strings.Contains(err.Error(), "timeout 100ms") {
		t.Errorf("stuck report: %v", err)
	}
	// The gauges are set on the runner's ticks: wait for one that saw the stuck cycle (a fixed
	// sleep failed under load, when no tick ran in it).
	for gaugeIfAny(m, "site_agent_cycle_stuck") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("site_agent_cycle_stuck = %v, want 1", gaugeIfAny(m, "site_agent_cycle_stuck"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := telemetry.CheckFile(hbPath, time.Second, time.Now()); err != nil {
		t.Fatalf("heartbeat went stale while a cycle hangs: %v", err)
	}
	if v := gaugeOf(t, m, "site_agent_cycle_running_seconds"); v < 0.2 {
		t.Errorf("site_agent_cycle_running_seconds = %v, want the hanging cycle's age", v)
	}
	close(mode.release)
	for r.Stuck() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the cycle ended but is still reported stuck")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := gaugeOf(t, m, "site_agent_cycle_stuck"); v != 0 {
		t.Errorf("site_agent_cycle_stuck = %v after the cycle ended", v)
	}
}

const hpcUUID = "E2EF0000-0000-0000-0000-0000000000AB"

// gaugeOf reads a gauge of mode order_process, offering HPC from the registry.
func gaugeOf(t *testing.T, m *telemetry.Metrics, name string) float64 {
	t.Helper()
	v, ok := cycleGauge(m, name)
	if !ok {
		t.Errorf("no %s{mode=order_process,offering_uuid=%s}", name, telemetry.OfferingLabel(hpcUUID))
	}
	return v
}

// gaugeIfAny is the gauge's value, or -1 while it has no series yet.
func gaugeIfAny(m *telemetry.Metrics, name string) float64 {
	if v, ok := cycleGauge(m, name); ok {
		return v
	}
	return -1
}

func cycleGauge(m *telemetry.Metrics, name string) (float64, bool) {
	families, err := m.Registry.Gather()
	if err != nil {
		return 0, false
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["mode"] == "order_process" && labels["offering_uuid"] == telemetry.OfferingLabel(hpcUUID) {
				return mt.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}
