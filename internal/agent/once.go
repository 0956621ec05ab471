package agent

import (
	"context"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
)

// RunOnceWithBackend runs one cycle of o.Mode for cfg exactly as `site-agent -m MODE --once`
// would, with backend in place of every configured one. It is for programs that embed the agent
// (the demo, with its in-memory backend); the agent itself is built by Build.
func RunOnceWithBackend(ctx context.Context, cfg *config.Config, backend backends.Backend, o Options) error {
	o.BackendOverride = func(config.Offering) backends.Backend { return backend }
	if o.Period == 0 {
		o.Period = time.Minute
	}
	a, err := Build(cfg, o)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.RunOnce(ctx)
}
