package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
)

// Options say how to assemble an agent from a configuration.
type Options struct {
	Mode     string // a registered mode, or modes.ModeAll
	DryRun   bool
	Period   time.Duration            // every mode's period when > 0 and Periods has no entry
	Periods  map[string]time.Duration // per mode, resolved from --period and the environment (see Periods)
	Warnings []string                 // the configuration's, logged at start
	Stdout   io.Writer                // where the logger writes when Logger is nil
	// HTTPClient and BackendOverride let the demo and tests inject an in-process simulator and a
	// shared backend instance; production leaves them nil.
	HTTPClient      *http.Client
	BackendOverride func(off config.Offering) backends.Backend
	Logger          *zap.Logger        // nil: a new one at the configured level (a reload's)
	Metrics         *telemetry.Metrics // process-wide; a reload keeps the counters
	Status          *telemetry.Status  // process-wide, what /status shows; nil: a new one
	Version         string             // of the program: logs, metrics, registration, user agents
	// History makes a one-off pass load past usage (modes.History); such a pass does not
	// register the agent in Waldur.
	History *modes.History
}

// Agent is an assembled, runnable set of modes (one, or all with -m all).
type Agent struct {
	cfg     *config.Config
	version string
	log     *zap.Logger
	metrics *telemetry.Metrics
	status  *telemetry.Status
	hb      *telemetry.Heartbeat
	tasks   []*modes.Runner
	periods []time.Duration
	closers []backends.Closer
	secrets backends.SecretStore // one per agent, shared by its backends; nil without a vault section
	// warnings are the backends' (unknown or ignored backend_settings keys), logged at Build.
	warnings []string

	mu      sync.Mutex
	readyOK bool
}

// Build assembles the agent. It makes no network calls; every error it returns is a
// configuration problem (exit code 2): config.Errors with every problem of every offering and
// mode, or the sentence of an unknown mode.
func Build(cfg *config.Config, o Options) (*Agent, error) {
	a, err := build(cfg, o)
	if err != nil {
		if a != nil {
			a.Close()
		}
		return nil, err
	}
	return a, nil
}

// Check is the validation every command runs: it builds the agent for mode (modes.ModeAll: every
// mode the offerings configure) as Build does, without logging, and discards it. It returns
// the backends' warnings (the configuration's own come from config.Load) and every problem
// Build would refuse to start with. It makes no network call.
func Check(cfg *config.Config, mode string) (warnings []string, err error) {
	a, err := build(cfg, Options{Mode: mode, Logger: zap.NewNop(), Metrics: telemetry.NewMetrics()})
	if a != nil {
		warnings = a.warnings
		a.Close()
	}
	return warnings, err
}

// build is Build, returning the agent even when it fails (its warnings are the caller's), or nil
// when it could not begin.
func build(cfg *config.Config, o Options) (*Agent, error) {
	log := o.Logger
	if log == nil {
		var err error
		if log, err = telemetry.NewLoggerFormat(o.Stdout, cfg.LogLevel, cfg.LogFormat); err != nil {
			return nil, err
		}
	}
	log = log.With(zap.String("mode", o.Mode))
	for _, w := range o.Warnings {
		log.Warn("configuration warning", zap.String("detail", w))
	}
	metrics := o.Metrics
	if metrics == nil {
		metrics = telemetry.NewMetrics()
	}
	secrets, err := secretStore(cfg)
	if err != nil {
		return nil, err
	}
	status := o.Status
	if status == nil {
		status = telemetry.NewStatus(o.Version)
	}
	a := &Agent{cfg: cfg, version: o.Version, log: log, metrics: metrics, status: status, hb: telemetry.NewHeartbeat(cfg.HeartbeatFile), secrets: secrets}
	a.metrics.Info.WithLabelValues(o.Version, o.Mode).Set(1)
	env := &modes.Env{Mode: o.Mode, Version: o.Version, Location: cfg.Location, ReportingPeriods: cfg.ReportingPeriods,
		ExposeDetails: cfg.ExposeBackendErrorDetails, Concurrency: cfg.Concurrency, Metrics: a.metrics, Status: status, Heartbeat: a.hb, Log: log,
		History: o.History}
	if err := a.assemble(cfg, o, env); err != nil {
		return a, err
	}
	for _, t := range a.tasks {
		t.Declare() // series at zero and the status page's offerings, before any cycle
	}
	return a, nil
}

// run runs every task until ctx is cancelled (graceful) or fence is (at once; nil = never), and
// returns when all of them have stopped.
func (a *Agent) run(ctx, fence context.Context) error {
	var names []string
	for _, t := range a.tasks {
		names = append(names, t.Name())
	}
	a.log.Info("agent started", zap.String("version", a.version), zap.Int("offerings", len(a.cfg.Offerings)),
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

// RunOnce runs one cycle of every task, one mode after the other (orders first, so resources
// created in this pass are synced and reported in it too).
func (a *Agent) RunOnce(ctx context.Context) error {
	var errs []error
	for _, t := range a.tasks {
		if err := t.RunOnce(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *Agent) live() error {
	// The runner's ticker beats every heartbeat interval whatever the cycles do (a stuck cycle
	// is readiness's business), so three missed beats mean the process itself is wedged.
	maxAge := max(time.Minute, 3*a.cfg.HeartbeatInterval)
	if last := a.hb.Last(); !last.IsZero() && time.Since(last) > maxAge {
		return fmt.Errorf("no heartbeat for %s (interval %s)", time.Since(last).Round(time.Second), a.cfg.HeartbeatInterval)
	}
	return nil
}

func (a *Agent) ready() error {
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

// startupOver releases the start-up pages once per process, after its first successful cycle.
var startupOver sync.Once

// onCycle marks the agent ready after its first successful cycle.
func (a *Agent) onCycle(_ *modes.Unit, err error) {
	if err == nil {
		a.mu.Lock()
		a.readyOK = true
		a.mu.Unlock()
		startupOver.Do(func() {
			n, err := releaseStartupPages()
			a.log.Debug("start-up over: the executable's read-only pages unmapped", zap.Uint64("bytes", n), zap.Error(err))
		})
	}
}

// Close releases the backends' connections and flushes the log.
func (a *Agent) Close() {
	for _, c := range a.closers {
		_ = c.Close()
	}
	_ = a.log.Sync()
}
