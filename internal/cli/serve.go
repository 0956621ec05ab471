package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// serve runs an agent until ctx is cancelled. SIGHUP re-reads the configuration (and its
// secret references) and swaps in a new agent; when the new configuration is invalid the
// running agent carries on and the problem is logged. The metrics listener lives for the whole
// process.
func serve(ctx context.Context, first *agent, reload func() (*agent, error)) error {
	var current atomic.Pointer[agent]
	current.Store(first)
	if addr := first.cfg.ListenAddress; addr != "" {
		health := telemetry.Health{Live: func() error { return current.Load().live() }, Ready: func() error { return current.Load().ready() }}
		bound, err := telemetry.Serve(ctx, addr, first.metrics, health, first.log)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		first.log.Info("serving metrics and health", zap.String("address", bound.String()))
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	_, _ = daemon.SdNotify(false, daemon.SdNotifyReady)
	defer daemon.SdNotify(false, daemon.SdNotifyStopping) //nolint:errcheck // best effort
	a := first
	for {
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.run(actx) }()
		next, err := waitForReload(ctx, done, hup, a, reload)
		cancel()
		if next == nil {
			a.close()
			return err
		}
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			a.log.Warn("previous agent stopped with an error", zap.Error(err))
		}
		a.close()
		a = next
		current.Store(a)
		a.log.Info("configuration reloaded")
	}
}

// waitForReload waits for the agent to stop (returns nil, its error) or for a valid reload
// (returns the new agent; the caller stops the old one).
func waitForReload(ctx context.Context, done chan error, hup chan os.Signal, a *agent, reload func() (*agent, error)) (*agent, error) {
	for {
		select {
		case err := <-done:
			return nil, err
		case <-hup:
			next, err := reload()
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

// reloader returns a function that loads the configuration again and builds a fresh agent.
func reloader(f runFlags, o buildOptions, io IO) func() (*agent, error) {
	return func() (*agent, error) {
		cfg, warnings, err := config.Load(f.configFile, config.Options{Environ: io.Environ, Overrides: overrides(f.listen, f.logLevel), Resolver: secretResolver})
		if err != nil {
			return nil, err
		}
		o.warnings = warnings
		return build(cfg, o)
	}
}
