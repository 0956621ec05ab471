package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
)

func checkConfigCmd(args []string, io IO) int {
	printWarnings := func(io IO, warnings []string) {
		for _, w := range warnings {
			fmt.Fprintln(io.Stdout, "warning:", w)
		}
	}
	s := spec{name: "check-config", warnings: printWarnings}
	return command(context.Background(), s, args, io, func(_ context.Context, inv *invocation) error {
		reg := agent.Backends()
		for _, off := range inv.cfg.Offerings {
			for _, spec := range modes.Specs() {
				key, name := spec.BackendKey(off)
				if name != "" && !reg.Has(name) {
					return usageErr(fmt.Errorf("%s: offerings[%d].%s: unknown backend %q (available: %v)", off.Label(), off.Index, key, name, reg.Names()))
				}
			}
		}
		fmt.Fprintf(io.Stdout, "%s: %d offering(s), configuration is valid\n", inv.cfg.Path, len(inv.cfg.Offerings))
		return nil
	})
}

// healthzCmd is the incumbent's waldur_site_healthz: liveness from the heartbeat file's age,
// readiness from an authenticated Waldur call for at least one offering.
func healthzCmd(ctx context.Context, args []string, io IO) int {
	fs := flag.NewFlagSet("healthz", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	configFile := fs.String("config-file", "/etc/waldur-site-agent/config.yaml", "configuration file (readiness check)")
	fs.StringVar(configFile, "c", "/etc/waldur-site-agent/config.yaml", "same as --config-file")
	maxAge := fs.Int("max-age", 300, "maximum heartbeat age in seconds")
	livenessOnly := fs.Bool("liveness-only", false, "only check the heartbeat file")
	heartbeat := fs.String("heartbeat-file", "", "heartbeat file (default: $SITE_AGENT_HEARTBEAT_FILE, heartbeat_file from the configuration, else /tmp/waldur-site-agent-heartbeat)")
	if err := fs.Parse(args); err != nil {
		return exitCode(io, errUsageReported)
	}
	path := *heartbeat
	if path == "" {
		path = envValue(io.Environ, "SITE_AGENT_HEARTBEAT_FILE")
	}
	if path == "" && *livenessOnly {
		path = "/tmp/waldur-site-agent-heartbeat"
	}
	if *livenessOnly {
		return healthResult(io, telemetry.CheckFile(path, time.Duration(*maxAge)*time.Second, time.Now()))
	}
	cfg, _, err := config.Load(*configFile, config.Options{Environ: io.Environ, Resolver: agent.SecretResolver})
	if err != nil {
		return exitCode(io, usageErr(err))
	}
	if path == "" {
		path = cfg.HeartbeatFile
	}
	if err := telemetry.CheckFile(path, time.Duration(*maxAge)*time.Second, time.Now()); err != nil {
		return healthResult(io, err)
	}
	var lastErr error
	for _, off := range cfg.Offerings {
		c, err := agent.ProbeClient(cfg, off, userAgent("healthz"), zap.NewNop())
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err = c.Ping(cctx)
			cancel()
		}
		if err == nil {
			return healthResult(io, nil)
		}
		lastErr = fmt.Errorf("%s: waldur not reachable: %w", off.Label(), err)
	}
	return healthResult(io, lastErr)
}

func envValue(environ func() []string, name string) string {
	if environ == nil {
		return ""
	}
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func healthResult(io IO, err error) int {
	if err != nil {
		fmt.Fprintln(io.Stderr, "unhealthy:", err)
		return ExitFailure
	}
	fmt.Fprintln(io.Stdout, "healthy")
	return ExitOK
}
