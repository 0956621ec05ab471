package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// checkConfigCommand validates the configuration file as the agent would before it starts:
// every problem and warning at once, each naming its offering and key.
func (a *app) checkConfigCommand() *cobra.Command {
	var path string
	cmd := &cobra.Command{Use: "check-config -c FILE", Short: "validate the configuration file and show every problem and warning", Args: noArgs}
	configFlag(cmd, &path, "waldur-site-agent-config.yaml")
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int {
		printWarnings := func(warnings []string) {
			for _, w := range warnings {
				fmt.Fprintln(a.io.Stdout, "warning:", w)
			}
		}
		c, err := loadChecked(cmd.Context(), path, a.io, printWarnings)
		if err != nil {
			return exitCode(a.io, err)
		}
		fmt.Fprintf(a.io.Stdout, "%s: %d offering(s), configuration is valid\n", c.cfg.Path, len(c.cfg.Offerings))
		return ExitOK
	})
	return cmd
}

// healthFlags are the incumbent's waldur_site_healthz flags (waldur_site_agent/common/healthz.py:
// --config-file, --max-age, --liveness-only) and site-agent's -c and --heartbeat-file.
type healthFlags struct {
	configFile, heartbeat string
	maxAge                int
	livenessOnly          bool
}

// healthzCommand is the incumbent's waldur_site_healthz: liveness from the heartbeat file's age,
// readiness from an authenticated Waldur call for at least one offering.
func (a *app) healthzCommand(name string) *cobra.Command {
	f := &healthFlags{}
	cmd := &cobra.Command{Use: name + " [--config-file FILE] [--max-age SECONDS] [--liveness-only]",
		Short: "exit 0 when the agent is alive (heartbeat file) and Waldur answers (readiness)", Args: noArgs}
	configFlag(cmd, &f.configFile, "/etc/waldur-site-agent/config.yaml")
	cmd.Flags().IntVar(&f.maxAge, "max-age", 300, "maximum heartbeat age in seconds")
	cmd.Flags().BoolVar(&f.livenessOnly, "liveness-only", false, "only check the heartbeat file")
	cmd.Flags().StringVar(&f.heartbeat, "heartbeat-file", "", "heartbeat file (default: $SITE_AGENT_HEARTBEAT_FILE, heartbeat_file from the configuration, else /tmp/waldur-site-agent-heartbeat)")
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int { return a.healthz(cmd.Context(), f) })
	return cmd
}

func (a *app) healthz(ctx context.Context, f *healthFlags) int {
	io := a.io
	path := f.heartbeat
	if path == "" {
		path = envValue(io.Environ, "SITE_AGENT_HEARTBEAT_FILE")
	}
	if path == "" && f.livenessOnly {
		path = "/tmp/waldur-site-agent-heartbeat"
	}
	maxAge := time.Duration(f.maxAge) * time.Second
	if f.livenessOnly {
		return healthResult(io, telemetry.CheckFile(path, maxAge, time.Now()))
	}
	cfg, _, err := config.Load(f.configFile, config.Options{Environ: io.Environ, Resolver: agent.SecretResolver})
	if err != nil {
		return exitCode(io, err)
	}
	if path == "" {
		path = cfg.HeartbeatFile
	}
	if err := telemetry.CheckFile(path, maxAge, time.Now()); err != nil {
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
