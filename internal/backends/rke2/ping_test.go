package rke2

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// pingCounter is the in-memory Rancher counting the backend's pings: full checks and cheap ones.
type pingCounter struct {
	memRancher
	full, cheap int
	fresh       time.Duration
	down        bool
}

func (p *pingCounter) Diagnose(context.Context) []backends.Check {
	p.full++
	return []backends.Check{{Name: "rancher rights", OK: !p.down, Detail: "rights"}}
}

func (p *pingCounter) Ping(_ context.Context, fresh time.Duration) error {
	p.cheap++
	p.fresh = fresh
	if p.down {
		return errors.New("503")
	}
	return nil
}

// Issue 17 item 14: the backend's cycle ping runs the diagnostics' full checks until they
// have passed once in the process (a failing one is repeated), then the one-request ping,
// which may stand on an answer up to pingFresh old.
func TestPingFullOnceThenCheap(t *testing.T) {
	w := newMemWorld(t, 1)
	p := &pingCounter{memRancher: memRancher{w}, down: true}
	b := memBackend(t, w)
	b.d.Rancher = p
	ctx := context.Background()
	if err := b.Ping(ctx); err == nil || !failure.IsTransient(err) {
		t.Fatalf("ping with the rights check failing: %v, want a transient error", err)
	}
	p.down = false
	for range 3 {
		if err := b.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p.full != 2 || p.cheap != 2 || p.fresh != pingFresh {
		t.Fatalf("full checks %d, cheap pings %d (fresh %s); want 2, 2 (%s)", p.full, p.cheap, p.fresh, pingFresh)
	}
	p.down = true
	if err := b.Ping(ctx); err == nil || !failure.IsTransient(err) {
		t.Fatalf("cheap ping failing: %v, want a transient error", err)
	}
}
