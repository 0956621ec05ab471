package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/leader"
	"github.com/waldur/site-agent/internal/telemetry"
)

// Supervise runs an agent until ctx is cancelled. SIGHUP calls reload, which re-reads the configuration (and its
// secret references) and swaps in a new agent; when the new configuration is invalid the
// running agent carries on and the problem is logged. The metrics listener lives for the whole
// process. With an elector the agent works only while this replica holds the lease; a standby
// applies a SIGHUP at once too (so a broken file is reported when it is sent, not at the next
// failover) and becomes leader with the configuration it last loaded.
func Supervise(ctx context.Context, first *Agent, reload func() (*Agent, error), el *leader.Elector) error {
	var current atomic.Pointer[Agent]
	current.Store(first)
	if addr := first.cfg.ListenAddress; addr != "" {
		health := telemetry.Health{Live: func() error { return current.Load().live() }, Ready: func() error {
			if el != nil && !el.Leading() {
				return nil // a standby is ready: it is doing its job, and a rollout must not wait for it
			}
			return current.Load().ready()
		}}
		if el != nil {
			health.Role = func() string { return role(el) }
		}
		first.status.SetLeader(leaderView(el))
		bound, err := telemetry.Serve(ctx, addr, first.metrics, health, first.status, first.log)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		first.log.Info("serving metrics and health", zap.String("address", bound.String()))
	}
	telemetry.FeedWatchdog(ctx, func() error { return current.Load().live() }, first.log)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	_, _ = daemon.SdNotify(false, daemon.SdNotifyReady)
	defer daemon.SdNotify(false, daemon.SdNotifyStopping) //nolint:errcheck // best effort
	defer func() { current.Load().Close() }()
	if el == nil {
		return work(ctx, nil, &current, hup, reload)
	}
	go standbyHeartbeat(ctx, el, &current)
	var swapping sync.Mutex // held while a standby swaps in a reloaded agent
	leaderHup := make(chan os.Signal, 1)
	go standbyReloads(ctx, el, &current, &swapping, hup, leaderHup, reload)
	return el.Run(ctx, func(fence context.Context) {
		swapping.Lock() // a standby reload under way finishes before the work starts
		swapping.Unlock()
		if err := work(ctx, fence, &current, leaderHup, reload); err != nil {
			current.Load().log.Error("agent stopped with an error", zap.Error(err))
		}
	})
}

// work runs the current agent until ctx (graceful) or fence (at once) is cancelled, swapping
// in a new agent on each valid reload.
func work(ctx, fence context.Context, current *atomic.Pointer[Agent], hup <-chan os.Signal, reload func() (*Agent, error)) error {
	for {
		a := current.Load()
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.run(actx, fence) }()
		next, err := waitForReload(ctx, done, hup, a, reload)
		cancel()
		if next == nil {
			return err
		}
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			a.log.Warn("previous agent stopped with an error", zap.Error(err))
		}
		a.Close()
		current.Store(next)
		next.retain()
		next.log.Info("configuration reloaded")
	}
}

// standbyReloads is the only reader of SIGHUP when an elector is used: the leader's work loop
// gets the signal; a standby reloads at once and swaps the agent it will run when it leads.
func standbyReloads(ctx context.Context, el *leader.Elector, current *atomic.Pointer[Agent], swapping *sync.Mutex,
	hup <-chan os.Signal, leaderHup chan<- os.Signal, reload func() (*Agent, error)) {
	for {
		var sig os.Signal
		select {
		case <-ctx.Done():
			return
		case sig = <-hup:
		}
		swapping.Lock()
		if el.Leading() {
			swapping.Unlock()
			select {
			case leaderHup <- sig:
			default: // one pending reload is enough
			}
			continue
		}
		a := current.Load()
		next, err := reload()
		a.reloaded(err)
		if err != nil {
			a.log.Error("reload failed; keeping the running configuration", zap.Error(err), zap.String("role", "standby"))
		} else {
			a.Close()
			current.Store(next)
			next.retain()
			next.log.Info("configuration reloaded", zap.String("role", "standby"))
		}
		swapping.Unlock()
	}
}

// role describes this replica for the probes.
func role(el *leader.Elector) string {
	if el.Leading() {
		return "leader " + el.Identity()
	}
	if l := el.Leader(); l != "" {
		return "standby " + el.Identity() + ", leader " + l
	}
	return "standby " + el.Identity() + ", no leader observed yet"
}

// standbyHeartbeat keeps the liveness file fresh while this replica stands by (the runner
// touches it while working).
func standbyHeartbeat(ctx context.Context, el *leader.Elector, current *atomic.Pointer[Agent]) {
	t := time.NewTicker(max(current.Load().cfg.HeartbeatInterval, time.Second))
	defer t.Stop()
	for {
		if !el.Leading() {
			current.Load().hb.Beat()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// waitForReload waits for the agent to stop (returns nil, its error) or for a valid reload
// (returns the new agent; the caller stops the old one).
func waitForReload(ctx context.Context, done chan error, hup <-chan os.Signal, a *Agent, reload func() (*Agent, error)) (*Agent, error) {
	for {
		select {
		case err := <-done:
			return nil, err
		case <-hup:
			next, err := reload()
			a.reloaded(err)
			if err != nil {
				a.log.Error("reload failed; keeping the running configuration", zap.Error(err))
				continue
			}
			return next, nil
		case <-ctx.Done():
			return nil, <-done
		}
	}
}
