package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"

	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/yaml11"
)

// delim separates koanf key paths. It is a control character so that keys containing dots or
// slashes (namespace labels such as example.com/pool) stay whole.
const delim = "\x1f"

// EnvPrefix prefixes environment variables that override top-level keys, e.g.
// SITE_AGENT_LOG_LEVEL=debug.
const EnvPrefix = "SITE_AGENT_"

// envKeys are the top-level keys that may be set from the environment; the upstreams section
// is set as SITE_AGENT_UPSTREAMS_<NAME>_<KEY> (e.g. SITE_AGENT_UPSTREAMS_WALDUR_TIMEOUT=30s).
var envKeys = map[string]bool{
	"log_level": true, "log_format": true, "listen_address": true, "heartbeat_file": true, "concurrency": true,
	"timezone": true, "reporting_periods": true, "cycle_timeout": true, "global_proxy": true,
	"heartbeat_interval": true,
}

// Options tune Load.
type Options struct {
	// Environ supplies the environment (default os.Environ), for tests.
	Environ func() []string
	// Overrides are top-level keys set from command-line flags; they win over everything.
	Overrides map[string]any
	// Resolver builds the resolver for vault: references from the top-level vault section.
	// Without it, a file containing references is refused.
	Resolver NewResolver
	// Context bounds secret resolution (default: 30 s).
	Context context.Context
}

// Load reads, merges and validates the configuration file at path. Warnings name keys that are
// unknown or accepted-but-ignored. A returned error is Errors: every problem of the file (a
// file that cannot be read or parsed, or whose secrets cannot be resolved, has one).
func Load(path string, opts Options) (*Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		problem := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			problem = "file does not exist"
		}
		return nil, nil, Errors{{Path: path, Problem: problem}}
	}
	return Parse(path, data, opts)
}

// Parse is Load for configuration text already in memory.
func Parse(path string, data []byte, opts Options) (*Config, []string, error) {
	k := koanf.NewWithConf(koanf.Conf{Delim: delim})
	if err := k.Load(rawbytes.Provider(data), yaml.Parser()); err != nil {
		return nil, nil, Errors{{Path: path, Problem: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ
	}
	envProvider := env.Provider(delim, env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: environ,
		TransformFunc: func(k, v string) (string, any) {
			key := strings.ToLower(strings.TrimPrefix(k, EnvPrefix))
			if path := upstreamEnv(key); path != "" {
				return path, v
			}
			if !envKeys[key] {
				return "", nil
			}
			return key, v
		},
	})
	if err := k.Load(envProvider, nil); err != nil {
		return nil, nil, Errors{{Path: path, Problem: "environment: " + err.Error()}}
	}
	if len(opts.Overrides) > 0 {
		if err := k.Load(confmap.Provider(opts.Overrides, delim), nil); err != nil {
			return nil, nil, Errors{{Path: path, Problem: "flags: " + err.Error()}}
		}
	}
	raw := k.Raw()
	ups, upWarnings, upErrs := parseUpstreams(raw["upstreams"])
	if len(upErrs) > 0 && hasRefs(raw) { // not fetched with invalid upstreams settings
		return nil, upWarnings, upErrs.withPath(path)
	}
	if section, ok := asMap(raw["vault"]); ok {
		raw["vault"] = withVaultUpstream(section, ups.Get(upstream.Vault))
	}
	ctx := opts.Context
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
	}
	if cerr := resolveCredentials(raw, environ); cerr != nil {
		return nil, nil, Errors{cerr}.withPath(path)
	}
	if rerr := resolveRefs(ctx, raw, opts.Resolver); rerr != nil {
		return nil, nil, Errors{rerr}.withPath(path)
	}
	cfg, warnings, errs := build(raw)
	warnings = append(upWarnings, warnings...)
	if errs = append(upErrs, errs...); len(errs) > 0 {
		return nil, warnings, errs.withPath(path)
	}
	cfg.Path, cfg.Upstreams = path, ups
	return cfg, warnings, nil
}

// build reads the whole file and reports every problem in it.
func build(raw map[string]any) (*Config, []string, Errors) {
	r := newReader(raw, "", "")
	cfg := &Config{
		LogLevel:                  strings.ToLower(r.str("log_level", "INFO")),
		LogFormat:                 strings.ToLower(r.str("log_format", "json")),
		ReportingPeriods:          r.integer("reporting_periods", 2),
		ExposeBackendErrorDetails: r.boolean("expose_backend_error_details", true),
		GlobalProxy:               r.str("global_proxy", ""),
		ListenAddress:             r.str("listen_address", ""),
		HeartbeatFile:             r.str("heartbeat_file", "/tmp/waldur-site-agent-heartbeat"),
		Concurrency:               r.integer("concurrency", 8),
	}
	var warnings []string
	if v, ok := r.get("vault"); ok { // the secrets store's own section, read by its resolver
		cfg.Vault, _ = asMap(v)
	}
	r.get("upstreams") // read by parseUpstreams
	warnings = append(warnings, ignoredTopLevel(r)...)
	validateTop(r, cfg)
	var lw []string
	cfg.LeaderElection, lw = leaderElection(r)
	warnings = append(warnings, lw...)
	list := r.list("offerings")
	if len(list) == 0 { // unless it is no list: that problem is recorded already, for the same key
		r.fail("offerings", "at least one offering is required")
	}
	warnings = append(warnings, unknownWarnings(r.unknown())...)
	errs := r.errs
	for i, item := range list {
		m, ok := asMap(item)
		if !ok {
			errs = append(errs, &Error{Key: fmt.Sprintf("offerings[%d]", i), Problem: "expected a mapping, got " + describe(item)})
			continue
		}
		off, w, oerrs := parseOffering(i, m)
		warnings = append(warnings, w...)
		errs = append(errs, oerrs...)
		cfg.Offerings = append(cfg.Offerings, off)
	}
	if errs = append(errs, checkDuplicates(cfg.Offerings)...); len(errs) > 0 {
		return nil, warnings, errs
	}
	return cfg, append(warnings, plainTextWarnings(cfg)...), nil
}

// hasRefs reports whether any string value is a vault: reference.
func hasRefs(raw map[string]any) bool {
	found := false
	walkStrings(raw, "", func(_, value string) { found = found || strings.HasPrefix(value, RefPrefix) })
	return found
}

func validateTop(r *reader, cfg *Config) {
	switch cfg.LogLevel {
	case "debug", "info", "error":
	case "warning", "warn":
		cfg.LogLevel = "warn"
	case "critical":
		cfg.LogLevel = "error"
	default:
		r.fail("log_level", "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got %q", cfg.LogLevel)
	}
	if cfg.LogFormat != "json" && cfg.LogFormat != "text" {
		r.fail("log_format", "must be json or text, got %q", cfg.LogFormat)
	}
	if cfg.ReportingPeriods < 1 || cfg.ReportingPeriods > 12 {
		r.fail("reporting_periods", "must be between 1 and 12, got %d", cfg.ReportingPeriods)
	}
	tz := r.str("timezone", "UTC")
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" || strings.EqualFold(tz, "local") {
		r.fail("timezone", "unknown IANA time zone %q", tz)
	}
	cfg.Location = loc
	if cfg.Concurrency < 1 || cfg.Concurrency > 256 {
		r.fail("concurrency", "must be between 1 and 256, got %d", cfg.Concurrency)
	}
	cfg.CycleTimeout = 30 * time.Minute
	if s := r.str("cycle_timeout", ""); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			r.fail("cycle_timeout", "expected a positive duration such as 30m, got %q", s)
		}
		cfg.CycleTimeout = d
	}
	cfg.HeartbeatInterval = 30 * time.Second
	if s := r.str("heartbeat_interval", ""); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 2*time.Minute {
			r.fail("heartbeat_interval", "expected a positive duration of at most 2m (healthz allows 300s by default) such as 30s, got %q", s)
		}
		cfg.HeartbeatInterval = d
	}
	if cfg.GlobalProxy != "" && !hasHTTPScheme(cfg.GlobalProxy) {
		r.fail("global_proxy", "must be an http:// or https:// URL")
	}
}

// ignoredTopLevel reads keys the incumbent accepts that site-agent does not implement and warns
// when they are set to something other than their default.
func ignoredTopLevel(r *reader) []string {
	var w []string
	if r.str("sentry_dsn", "") != "" {
		w = append(w, "sentry_dsn: accepted but not implemented; errors go to the JSON log and Prometheus metrics")
	}
	if r.str("elastic_apm_server_url", "") != "" {
		w = append(w, "elastic_apm_server_url: accepted but not implemented")
	}
	if ls := r.mapping("log_shipping"); ls != nil {
		if enabled, _ := yaml11.Bool(ls["enabled"]); enabled {
			w = append(w, "log_shipping.enabled: accepted but not implemented; ship the JSON log with your log collector")
		}
	}
	return w
}

func unknownWarnings(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + ": unknown key, ignored (a typo?)"
	}
	return out
}

func hasHTTPScheme(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
