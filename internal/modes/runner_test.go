package modes

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// slowMode's cycle works for `work` (or until its context ends) and records how it ended.
type slowMode struct {
	work     time.Duration
	started  chan struct{}
	finished atomic.Int32 // cycles that ran to the end
	cut      atomic.Int32 // cycles whose context was cancelled
}

func (*slowMode) Name() string { return "slow" }

func (m *slowMode) RunOnce(ctx context.Context, _ *Unit) error {
	select {
	case m.started <- struct{}{}:
	default:
	}
	select {
	case <-time.After(m.work):
		m.finished.Add(1)
		return nil
	case <-ctx.Done():
		m.cut.Add(1)
		return ctx.Err()
	}
}

func slowRunner(m *slowMode) *Runner {
	env := &Env{Metrics: telemetry.NewMetrics(), Log: zap.NewNop()}
	return &Runner{Env: env, Mode: m, Period: time.Hour, Grace: 10 * time.Second,
		Units: []*Unit{{Offering: config.Offering{Name: "o"}, Log: zap.NewNop()}}}
}

func TestRunnerStopGivesWorkInFlightItsGrace(t *testing.T) {
	m := &slowMode{work: 300 * time.Millisecond, started: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- slowRunner(m).Run(ctx, nil) }()
	<-m.started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m.finished.Load() != 1 || m.cut.Load() != 0 {
		t.Fatalf("graceful stop: finished %d, cut %d; the cycle in flight should have finished", m.finished.Load(), m.cut.Load())
	}
}

func TestRunnerFenceCutsWorkInFlightAtOnce(t *testing.T) {
	m := &slowMode{work: time.Minute, started: make(chan struct{}, 1)}
	fence, lose := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- slowRunner(m).Run(context.Background(), fence) }()
	<-m.started
	lose()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second): // half the 10 s grace: no grace was given
		t.Fatal("Run went on after the fence was cancelled")
	}
	if m.cut.Load() != 1 || m.finished.Load() != 0 {
		t.Fatalf("fenced: finished %d, cut %d; the cycle in flight should have been cut", m.finished.Load(), m.cut.Load())
	}
}

// A panic in one item of a pass neither ends the process nor stops the other items: forEach
// raises it again in its caller (the cycle, whose recover counts it) once all have finished.
func TestForEachPanicReachesTheCallerAfterTheOthers(t *testing.T) {
	var done atomic.Int32
	var got any
	func() {
		defer func() { got = recover() }()
		forEach(context.Background(), 2, []int{1, 2, 3, 4, 5}, func(i int) {
			if i == 2 {
				panic("resource 2 is broken")
			}
			time.Sleep(10 * time.Millisecond)
			done.Add(1)
		})
	}()
	if got == nil || !strings.Contains(fmt.Sprint(got), "resource 2 is broken") {
		t.Fatalf("recovered %v", got)
	}
	if done.Load() != 4 {
		t.Fatalf("%d of the 4 other items ran", done.Load())
	}
}
