package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/upstream"
)

// runProbes runs every probe at once under its own deadline and hands results over as they
// finish: a quick probe is not held back by slow ones, one that ignores its deadline is
// reported as not answering at deadline + grace, a panic is a failed check, and the probes'
// contexts are marked for a person waiting (no retries of refused connections).
func TestRunProbesAtOnceUnderDeadlines(t *testing.T) {
	const deadline = 200 * time.Millisecond
	block := make(chan struct{})
	defer close(block)
	off := config.Offering{Name: "A"}
	probes := []probe{
		{off: off, seq: 0, upstream: "quick", run: func(ctx context.Context) []backends.Check {
			return []backends.Check{{Name: "quick", OK: upstream.IsProbing(ctx)}}
		}},
		{off: off, seq: 1, upstream: "deadline", run: func(ctx context.Context) []backends.Check {
			<-ctx.Done()
			return []backends.Check{{Name: "deadline", Detail: ctx.Err().Error()}}
		}},
		{off: off, seq: 2, upstream: "stuck", run: func(context.Context) []backends.Check {
			<-block // ignores its context
			return nil
		}},
		{off: off, seq: 3, upstream: "crash", run: func(context.Context) []backends.Check { panic("boom") }},
	}
	start := time.Now()
	got := map[string]time.Duration{}
	var lines []backends.Check
	runProbes(context.Background(), probes, deadline, func(r result) {
		got[r.probe.upstream] = time.Since(start)
		lines = append(lines, r.checks...)
	})
	took := time.Since(start)
	if len(got) != len(probes) || took > deadline+grace+300*time.Millisecond {
		t.Fatalf("%d results after %s", len(got), took)
	}
	if got["quick"] > deadline/2 || got["crash"] > deadline/2 {
		t.Errorf("quick results waited for the slow ones: %v", got)
	}
	if got["deadline"] < deadline || got["stuck"] < deadline+grace {
		t.Errorf("deadlines not kept: %v", got)
	}
	text := ""
	for _, l := range lines {
		text += l.Name + ":" + l.Detail + "\n"
		if l.OK != (l.Name == "quick") {
			t.Errorf("line %+v", l)
		}
	}
	for _, want := range []string{"deadline:context deadline exceeded", "stuck:no answer within the deadline of 200ms", "crash:check crashed: boom"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
}
