package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// run runs every task until ctx is cancelled (graceful) or fence is (at once; nil = never), and
// returns when all of them have stopped.
func (a *agent) run(ctx, fence context.Context) error {
	var names []string
	for _, t := range a.tasks {
		names = append(names, t.Name())
	}
	a.log.Info("agent started", zap.String("version", Version), zap.Int("offerings", len(a.cfg.Offerings)),
		zap.Strings("modes", names), zap.Durations("periods", a.periods))
	var wg sync.WaitGroup
	errs := make([]error, len(a.tasks))
	for i, t := range a.tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.Run(ctx, fence); err != nil {
				errs[i] = fmt.Errorf("%s: %w", t.Name(), err)
			}
		}()
	}
	wg.Wait()
	a.log.Info("agent stopped")
	return errors.Join(errs...)
}

// runOnce runs one cycle of every task, one mode after the other (orders first, so resources
// created in this pass are synced and reported in it too).
func (a *agent) runOnce(ctx context.Context) error {
	var errs []error
	for _, t := range a.tasks {
		if err := t.RunOnce(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *agent) live() error {
	// The runner's ticker beats every heartbeat interval whatever the cycles do (a stuck cycle
	// is readiness's business), so three missed beats mean the process itself is wedged.
	maxAge := max(time.Minute, 3*a.cfg.HeartbeatInterval)
	if last := a.hb.Last(); !last.IsZero() && time.Since(last) > maxAge {
		return fmt.Errorf("no heartbeat for %s (interval %s)", time.Since(last).Round(time.Second), a.cfg.HeartbeatInterval)
	}
	return nil
}

func (a *agent) ready() error {
	for _, t := range a.tasks {
		if err := t.Stuck(); err != nil {
			return err
		}
		if err := t.Ready(); err != nil { // event mode: every listener subscribed
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.readyOK {
		return errors.New("no successful cycle yet")
	}
	return nil
}

func (a *agent) close() {
	for _, c := range a.closers {
		_ = c.Close()
	}
	_ = a.log.Sync()
}
