package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/backends/rancher"
	"github.com/waldur/site-agent/internal/backends/rancherkccrd"
	rke2wire "github.com/waldur/site-agent/internal/backends/rke2/wire"
	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// registry lists every backend the agent can run. Adding a backend means adding a line here.
func registry() *backends.Registry {
	r := backends.NewRegistry()
	r.Register("inmemory", inmemory.New)
	r.Register("openstack", openstack.New)
	r.Register("rancher", rancher.New)
	r.Register(rancherkccrd.Name, rancherkccrd.New)
	r.Register("rke2", rke2wire.New)
	return r
}

type buildOptions struct {
	mode     string // a registered mode, or modeAll
	dryRun   bool
	period   time.Duration            // every mode's period when > 0 and periods has no entry
	periods  map[string]time.Duration // per mode, resolved from --period and the environment
	warnings []string
	stdout   io.Writer
	// httpClient and backendOverride let the demo and tests inject an in-process simulator and a
	// shared backend instance; production leaves them nil.
	httpClient      *http.Client
	backendOverride func(off config.Offering) backends.Backend
	logger          *zap.Logger
	metrics         *telemetry.Metrics // process-wide; a reload keeps the counters
}

// agent is an assembled, runnable set of modes (one, or all with -m all).
type agent struct {
	cfg     *config.Config
	log     *zap.Logger
	metrics *telemetry.Metrics
	hb      *telemetry.Heartbeat
	tasks   []task
	periods []time.Duration
	closers []backends.Closer
	secrets backends.SecretStore // one per agent, shared by its backends; nil without a vault section

	mu      sync.Mutex
	readyOK bool
}

// build assembles the agent. It makes no network calls; every error it returns is a
// configuration problem (exit code 2).
func build(cfg *config.Config, o buildOptions) (*agent, error) {
	log := o.logger
	if log == nil {
		var err error
		if log, err = telemetry.NewLogger(o.stdout, cfg.LogLevel); err != nil {
			return nil, err
		}
	}
	log = log.With(zap.String("mode", o.mode))
	for _, w := range o.warnings {
		log.Warn("configuration warning", zap.String("detail", w))
	}
	metrics := o.metrics
	if metrics == nil {
		metrics = telemetry.NewMetrics()
	}
	secrets, err := secretStore(cfg)
	if err != nil {
		return nil, err
	}
	a := &agent{cfg: cfg, log: log, metrics: metrics, hb: telemetry.NewHeartbeat(cfg.HeartbeatFile), secrets: secrets}
	a.metrics.Info.WithLabelValues(Version, o.mode).Set(1)
	env := &modes.Env{Mode: o.mode, Version: Version, Location: cfg.Location, ReportingPeriods: cfg.ReportingPeriods,
		ExposeDetails: cfg.ExposeBackendErrorDetails, Concurrency: cfg.Concurrency, Metrics: a.metrics, Heartbeat: a.hb, Log: log}
	if err := a.assemble(cfg, o, env); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// secretStore builds the secrets store from the vault section (nil without one). It validates
// the section and makes no network call.
func secretStore(cfg *config.Config) (backends.SecretStore, error) {
	if cfg.Vault == nil {
		return nil, nil
	}
	st, err := vault.NewStore(cfg.Vault)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Problem: err.Error()}
	}
	return st, nil
}

func (a *agent) onCycle(_ *modes.Unit, err error) {
	if err == nil {
		a.mu.Lock()
		a.readyOK = true
		a.mu.Unlock()
	}
}

func (a *agent) backend(reg *backends.Registry, off config.Offering, o buildOptions, key, name string) (backends.Set, error) {
	var b backends.Backend
	if o.backendOverride != nil {
		b = o.backendOverride(off)
	}
	if b == nil {
		if !reg.Has(name) {
			return backends.Set{}, &config.Error{Path: a.cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].%s", off.Index, key),
				Problem: fmt.Sprintf("unknown backend %q (available: %v)", name, reg.Names())}
		}
		var warnings []string
		var err error
		b, warnings, err = reg.New(name, backends.Params{Offering: off.Name, Settings: off.BackendSettings,
			Components: off.Components, Logger: a.log.With(zap.String("backend", name)), DryRun: o.dryRun, Secrets: a.secrets,
			Upstreams: a.cfg.Upstreams})
		for _, w := range warnings {
			a.log.Warn("configuration warning", zap.String("offering", off.Name), zap.String("detail", fmt.Sprintf("offerings[%d].%s: unknown key, ignored", off.Index, w)))
		}
		if err != nil {
			return backends.Set{}, &config.Error{Path: a.cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d]", off.Index), Problem: err.Error()}
		}
	}
	set := backends.RolesOf(name, b)
	if set.Closer != nil {
		a.closers = append(a.closers, set.Closer)
	}
	set = backends.Instrument(set, a.observer(name))
	if o.dryRun {
		set = backends.DryRun(set)
	}
	return set, nil
}

func (a *agent) observer(name string) backends.Observer {
	return func(op string, took time.Duration, err error) {
		result := "ok"
		switch {
		case err == nil:
		case failure.IsTransient(err):
			result = "transient"
		case errors.Is(err, failure.ErrNotFound):
			result = "not_found"
		default:
			result = "error"
		}
		a.metrics.BackendOps.WithLabelValues(name, op, result).Inc()
		a.metrics.BackendLatency.WithLabelValues(name, op).Observe(took.Seconds())
	}
}

func (a *agent) waldurClient(cfg *config.Config, off config.Offering, o buildOptions, clients map[string]*http.Client) (*waldurclient.Client, error) {
	hc := o.httpClient
	if hc == nil {
		key := strconv.FormatBool(off.VerifySSL)
		if hc = clients[key]; hc == nil {
			hc = waldurclient.NewHTTPClient(waldurclient.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy,
				Timeout: cfg.Upstreams.Get(upstream.Waldur).Timeout})
			clients[key] = hc
		}
	}
	opts := waldurclient.Options{BaseURL: off.APIURL, Token: off.Token, HTTPClient: hc, DryRun: o.dryRun,
		Retry:     cfg.Upstreams.Get(upstream.Waldur).RetryPolicy(),
		UserAgent: "site-agent-" + o.mode + "/" + Version, Logger: a.log.With(zap.String("offering", off.Name)),
		OnRequest: func(ri waldurclient.RequestInfo) {
			a.metrics.WaldurRequests.WithLabelValues(off.Name, ri.Method, ri.Endpoint, strconv.Itoa(ri.Status)).Inc()
			a.metrics.WaldurLatency.WithLabelValues(ri.Method, ri.Endpoint).Observe(ri.Duration.Seconds())
		}}
	if off.OIDC != nil {
		opts.OIDC = &waldurclient.OIDCConfig{TokenURL: off.OIDC.TokenURL, ClientID: off.OIDC.ClientID, ClientSecret: off.OIDC.ClientSecret}
	}
	c, err := waldurclient.New(opts)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].waldur_api_url", off.Index), Problem: err.Error()}
	}
	return c, nil
}
