package inmemory

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Settings are the backend_settings the in-memory backend reads.
type Settings struct {
	// StateFile persists state between runs and shares it between processes ("" = memory only).
	StateFile string `mapstructure:"state_file"`
	// Usage is the usage each resource reports per period (backend units), by component.
	Usage map[string]float64 `mapstructure:"usage"`
	// UsageFraction, for components without a fixed Usage, reports this fraction of the limit.
	UsageFraction float64 `mapstructure:"usage_fraction"`
	// PerUserUsage splits each total equally among the resource's members.
	PerUserUsage bool `mapstructure:"per_user_usage"`
	// PastPeriods reports the same usage for past billing periods too (by default only the
	// current one is measured), so that a load of historical usage has months to load.
	PastPeriods bool `mapstructure:"past_periods"`
	// Latency is added to every operation.
	Latency time.Duration `mapstructure:"latency"`
	// MaxLimits makes the backend reject pending orders that ask for more (backend units).
	MaxLimits map[string]float64 `mapstructure:"max_limits"`
	Faults    Faults             `mapstructure:"faults"`
}

// Faults inject failures deterministically.
type Faults struct {
	Rate       float64  `mapstructure:"rate"`       // probability per operation
	Seed       uint64   `mapstructure:"seed"`       // random seed
	Kind       string   `mapstructure:"kind"`       // transient (default) or permanent
	Operations []string `mapstructure:"operations"` // operation names; empty = all
}

// Backend is the in-memory backend.
type Backend struct {
	settings Settings
	comps    backends.Components
	log      *zap.Logger

	mu    sync.Mutex
	state *state
	rng   *rand.Rand
}

// New is the registry constructor.
func New(p backends.Params) (backends.Backend, []string, error) {
	var s Settings
	warnings, err := backends.DecodeSettings(p.Settings, &s)
	if err != nil {
		return nil, warnings, err
	}
	if s.UsageFraction < 0 || s.UsageFraction > 1000 {
		return nil, warnings, fmt.Errorf("backend_settings.usage_fraction: must be between 0 and 1000, got %v", s.UsageFraction)
	}
	if s.Faults.Rate < 0 || s.Faults.Rate > 1 {
		return nil, warnings, fmt.Errorf("backend_settings.faults.rate: must be between 0 and 1, got %v", s.Faults.Rate)
	}
	if k := s.Faults.Kind; k != "" && k != "transient" && k != "permanent" {
		return nil, warnings, fmt.Errorf("backend_settings.faults.kind: must be transient or permanent, got %q", k)
	}
	return NewBackend(s, p.Components, p.Logger), warnings, nil
}

// NewBackend builds the backend directly (tests, demo).
func NewBackend(s Settings, comps backends.Components, log *zap.Logger) *Backend {
	if log == nil {
		log = zap.NewNop()
	}
	seed := s.Faults.Seed
	return &Backend{settings: s, comps: comps, log: log, state: newState(),
		rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// Objects returns a copy of every backend object, sorted by id.
func (b *Backend) Objects() ([]Object, error) {
	var out []Object
	err := b.read(func(st *state) error {
		out = st.sortedObjects()
		return nil
	})
	return out, err
}

// Ops returns the operation log.
func (b *Backend) Ops() ([]Op, error) {
	var out []Op
	err := b.read(func(st *state) error {
		out = append(out, st.Ops...)
		return nil
	})
	return out, err
}

// fault decides whether operation op fails now.
func (b *Backend) fault(op string) error {
	f := b.settings.Faults
	if f.Rate <= 0 {
		return nil
	}
	if len(f.Operations) > 0 {
		hit := false
		for _, o := range f.Operations {
			hit = hit || o == op
		}
		if !hit {
			return nil
		}
	}
	if b.rng.Float64() >= f.Rate {
		return nil
	}
	if f.Kind == "permanent" {
		return failure.Errorf("injected permanent failure in %s", op)
	}
	return failure.Transient(fmt.Errorf("injected transient failure in %s", op))
}

func (b *Backend) pause() {
	if b.settings.Latency > 0 {
		time.Sleep(b.settings.Latency)
	}
}
