package modes

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of asks while a pass runs costs one more pass; an ask while that one runs, another.
func TestPassCoalescesToOneWaiting(t *testing.T) {
	var (
		p       pass
		wg      sync.WaitGroup
		runs    atomic.Int32
		started = make(chan struct{}, 10)
		release = make(chan struct{})
	)
	fn := func(context.Context) { runs.Add(1); started <- struct{}{}; <-release }
	ask := func(n int) (scheduled int) {
		for range n {
			if p.trigger(context.Background(), &wg, fn) {
				scheduled++
			}
		}
		return scheduled
	}
	if ask(1) != 1 {
		t.Fatal("the first ask was coalesced")
	}
	<-started
	if n := ask(100); n != 1 {
		t.Fatalf("%d of 100 asks during a pass scheduled one; want exactly one waiting", n)
	}
	release <- struct{}{}
	<-started // the waiting pass began: it may have read already, so an ask now needs a third
	if n := ask(5); n != 1 {
		t.Fatalf("%d of 5 asks during the second pass scheduled one", n)
	}
	release <- struct{}{}
	<-started
	release <- struct{}{}
	wg.Wait()
	if n := runs.Load(); n != 3 {
		t.Fatalf("%d passes for 106 asks in three bursts", n)
	}
}

// A pass still waiting when the run stops is skipped.
func TestPassWaitingAtStopIsSkipped(t *testing.T) {
	var (
		p       pass
		wg      sync.WaitGroup
		runs    atomic.Int32
		release = make(chan struct{})
		started = make(chan struct{})
	)
	p.trigger(context.Background(), &wg, func(context.Context) { runs.Add(1); close(started); <-release })
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	p.trigger(ctx, &wg, func(context.Context) { runs.Add(1) })
	cancel()
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d passes: the one waiting at the stop ran", n)
	}
}

// Concurrent asks: never two passes at once, and the last pass starts after the last ask
// (an ask is never lost), however the asks and passes interleave.
func TestPassConcurrentAsksAreNeverLost(t *testing.T) {
	var (
		p                    pass
		passes               sync.WaitGroup
		askers               sync.WaitGroup
		asks, running, twice atomic.Int32
		runs, lastSeen       atomic.Int32
	)
	fn := func(context.Context) {
		if running.Add(1) > 1 {
			twice.Add(1)
		}
		runs.Add(1)
		lastSeen.Store(asks.Load())
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		running.Add(-1)
	}
	const goroutines, each = 8, 200
	for range goroutines {
		askers.Add(1)
		go func() {
			defer askers.Done()
			for range each {
				asks.Add(1)
				p.trigger(context.Background(), &passes, fn)
				if rand.IntN(4) == 0 {
					time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				}
			}
		}()
	}
	askers.Wait()
	passes.Wait()
	if twice.Load() != 0 {
		t.Fatalf("two passes ran at once %d times", twice.Load())
	}
	if got := lastSeen.Load(); got != goroutines*each {
		t.Fatalf("the last pass started after %d of %d asks: an ask was lost", got, goroutines*each)
	}
	t.Logf("%d passes for %d asks", runs.Load(), goroutines*each)
}
