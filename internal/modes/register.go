package modes

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"go.uber.org/zap"

	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// processorNames are the processor names the incumbent registers, kept so Waldur's agent pages
// look the same after a migration.
var processorNames = map[string]string{
	"order_process":   "OfferingOrderProcessor",
	"membership_sync": "OfferingMembershipProcessor",
	"report":          "OfferingReportProcessor",
}

// Registrar registers the agent with Waldur once per process start and offering: identity
// "agent-<offering uuid>" (updated in place when it exists), the mode's service and its
// processor. The incumbent repeated this every cycle because its cache was never filled.
type Registrar struct {
	Env     *Env
	Started time.Time
}

// Register implements Runner.Register.
func (g *Registrar) Register(ctx context.Context, u *Unit) error {
	name := "agent-" + u.Offering.UUID
	req := wc.IdentityRequest{
		Offering:      u.Offering.UUID,
		Name:          name,
		Version:       g.Env.Version,
		LastRestarted: g.Started.UTC().Format(time.RFC3339),
		Dependencies: []wc.Dependency{
			{Package: "site-agent", Version: g.Env.Version},
			{Package: "go", Version: runtime.Version()},
			{Package: "backend:" + u.Backend.Name, Version: g.Env.Version},
		},
	}
	id, found, err := u.Waldur.FindIdentity(ctx, name)
	if err != nil {
		return fmt.Errorf("find identity: %w", err)
	}
	if found {
		id, err = u.Waldur.UpdateIdentity(ctx, id.UUID, req)
	} else {
		id, err = u.Waldur.CreateIdentity(ctx, req)
	}
	if err != nil {
		return fmt.Errorf("register identity: %w", err)
	}
	if id.UUID == "" { // dry run: nothing was written
		return nil
	}
	svc, err := u.Waldur.RegisterService(ctx, id.UUID, g.Env.Mode, g.Env.Mode)
	if err != nil {
		return fmt.Errorf("register service: %w", err)
	}
	if err := u.Waldur.RegisterProcessor(ctx, svc.UUID, processorNames[g.Env.Mode], "site-agent/"+u.Backend.Name, g.Env.Version); err != nil {
		return fmt.Errorf("register processor: %w", err)
	}
	u.Log.Info("agent registered with waldur", zap.String("identity", id.UUID), zap.String("service", svc.UUID))
	return nil
}
