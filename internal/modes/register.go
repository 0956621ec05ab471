package modes

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// Registrar registers the agent with Waldur once per process start and offering: identity
// "agent-<offering uuid>" (updated in place when it exists), then each mode's service and
// processor. The incumbent repeated this every cycle because its cache was never filled. One
// Registrar is shared by all modes of a process (-m all), so the identity is looked up and
// written once per offering, not once per mode.
type Registrar struct {
	Env     *Env
	Started time.Time

	mu         sync.Mutex
	identities map[string]string // offering UUID → identity UUID ("" in a dry run)
	locks      map[string]*sync.Mutex
}

// ForMode returns the Runner.Register function for one mode.
func (g *Registrar) ForMode(mode string) func(ctx context.Context, u *Unit) error {
	return func(ctx context.Context, u *Unit) error { return g.register(ctx, mode, u) }
}

// Register implements Runner.Register for the mode named in Env.
func (g *Registrar) Register(ctx context.Context, u *Unit) error {
	return g.register(ctx, g.Env.Mode, u)
}

func (g *Registrar) register(ctx context.Context, mode string, u *Unit) error {
	id, err := g.identity(ctx, u)
	if err != nil {
		return err
	}
	if id == "" { // dry run: nothing was written
		return nil
	}
	svc, err := u.Waldur.RegisterService(ctx, id, mode, mode)
	if err != nil {
		return fmt.Errorf("register service: %w", err)
	}
	if err := u.Waldur.RegisterProcessor(ctx, svc.UUID, processorName(mode), "site-agent/"+u.Backend.Name, g.Env.Version); err != nil {
		return fmt.Errorf("register processor: %w", err)
	}
	u.Log.Info("agent registered with waldur", zap.String("identity", id), zap.String("service", svc.UUID))
	return nil
}

// Identity returns the offering's agent identity UUID, registering it first if this process has
// not ("" in a dry run). The event mode needs it for its subscriptions.
func (g *Registrar) Identity(ctx context.Context, u *Unit) (string, error) { return g.identity(ctx, u) }

// Forget drops the remembered identity of an offering (Waldur no longer knows it), so the next
// Identity registers it again.
func (g *Registrar) Forget(offeringUUID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.identities, offeringUUID)
}

// identity finds or creates the offering's agent identity once; modes registering the same
// offering at the same time wait for the first.
func (g *Registrar) identity(ctx context.Context, u *Unit) (string, error) {
	lock := g.lock(u.Offering.UUID)
	lock.Lock()
	defer lock.Unlock()
	g.mu.Lock()
	id, done := g.identities[u.Offering.UUID]
	g.mu.Unlock()
	if done {
		return id, nil
	}
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
	ident, found, err := u.Waldur.FindIdentity(ctx, name)
	if err != nil {
		return "", fmt.Errorf("find identity: %w", err)
	}
	if found {
		ident, err = u.Waldur.UpdateIdentity(ctx, ident.UUID, req)
	} else {
		ident, err = u.Waldur.CreateIdentity(ctx, req)
	}
	if err != nil {
		return "", fmt.Errorf("register identity: %w", err)
	}
	g.mu.Lock()
	if g.identities == nil {
		g.identities = map[string]string{}
	}
	g.identities[u.Offering.UUID] = ident.UUID
	g.mu.Unlock()
	return ident.UUID, nil
}

func (g *Registrar) lock(offering string) *sync.Mutex {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.locks == nil {
		g.locks = map[string]*sync.Mutex{}
	}
	l := g.locks[offering]
	if l == nil {
		l = &sync.Mutex{}
		g.locks[offering] = l
	}
	return l
}

// processorName is the processor the mode registers in Waldur.
func processorName(mode string) string {
	s, _ := Lookup(mode)
	return s.Processor
}
