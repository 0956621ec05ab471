package cli

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
)

// PassOnce runs one cycle of mode for cfg exactly as `site-agent -m MODE --once` would, with
// backend in place of the configured ones. It is for programs that embed the agent (the demo);
// the agent itself goes through Run.
func PassOnce(ctx context.Context, cfg *config.Config, mode string, log *zap.Logger, backend backends.Backend) error {
	a, err := build(cfg, buildOptions{mode: mode, period: time.Minute, logger: log,
		backendOverride: func(config.Offering) backends.Backend { return backend }})
	if err != nil {
		return err
	}
	defer a.close()
	return a.runOnce(ctx)
}
