package agent

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// shared holds what the modes of one process share: one Waldur client per offering (one OIDC
// token, one connection pool per TLS setting) and one backend instance per offering and
// backend name.
type shared struct {
	reg      *backends.Registry
	http     map[string]*http.Client
	waldur   map[int]*waldurclient.Client
	backends map[string]backends.Set
	failed   map[string]bool // backends whose problems are reported already
}

// assemble builds one runner per mode that at least one offering runs. It goes through every
// mode and offering, and returns every problem it found (config.Errors).
func (a *Agent) assemble(cfg *config.Config, o Options, env *modes.Env) error {
	names, err := a.modesToRun(cfg, o.Mode)
	if err != nil {
		return err
	}
	sh := &shared{reg: Backends(), http: map[string]*http.Client{}, waldur: map[int]*waldurclient.Client{},
		backends: map[string]backends.Set{}, failed: map[string]bool{}}
	registrar := &modes.Registrar{Env: env, Started: time.Now()}
	var problems config.Errors
	for _, name := range names {
		spec, _ := modes.Lookup(name)
		units, errs := a.modeUnits(cfg, o, spec, sh)
		if problems = append(problems, errs...); len(problems) > 0 {
			continue // the other modes are checked; nothing is started
		}
		if len(units) == 0 {
			continue
		}
		period := modePeriod(spec, o)
		menv := *env
		menv.Mode = name
		menv.Log = a.taskLog(o, name)
		p := modes.TaskParams{Env: &menv, Units: units, Period: period, Timeout: cfg.CycleTimeout, Tick: cfg.HeartbeatInterval,
			OnCycle: a.onCycle, Registrar: registrar, Config: cfg, DryRun: o.DryRun,
			Backend: func(off config.Offering, key, name string) (backends.Set, error) {
				return a.sharedBackend(off, o, key, name, sh)
			}}
		if !o.DryRun && o.History == nil { // registration writes to Waldur; a load of past usage is no agent
			p.Register = registrar.ForMode(name)
		}
		r, err := spec.New(p)
		if err != nil {
			problems = append(problems, asProblems(cfg, err)...)
			continue
		}
		a.tasks = append(a.tasks, r)
		a.periods = append(a.periods, period)
	}
	if len(problems) > 0 {
		return problems
	}
	if len(a.tasks) == 0 {
		return modes.NothingToDo(cfg, o.Mode)
	}
	return nil
}

// errReportedAlready is a backend's failure to build met again by another mode.
var errReportedAlready = errors.New("backend problems reported already")

// asProblems is err as configuration problems (a mode's constructor returns *config.Error).
func asProblems(cfg *config.Config, err error) config.Errors {
	if errors.Is(err, errReportedAlready) {
		return nil
	}
	var es config.Errors
	if errors.As(err, &es) {
		return es
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return config.Errors{ce}
	}
	return config.Errors{{Path: cfg.Path, Problem: err.Error()}}
}

// modesToRun lists the modes to start: the one asked for, or with -m all every mode some
// offering configures.
func (a *Agent) modesToRun(cfg *config.Config, mode string) ([]string, error) {
	if mode != modes.ModeAll {
		if _, ok := modes.Lookup(mode); !ok {
			return nil, fmt.Errorf("unknown mode %q (choose %s or all)", mode, strings.Join(modes.Names(), ", "))
		}
		return []string{mode}, nil
	}
	wanted := map[string]bool{}
	for _, off := range cfg.Offerings {
		for _, m := range modes.OfferingModes(off) {
			wanted[m] = true
		}
	}
	var names []string
	for _, name := range modes.Names() {
		if wanted[name] {
			names = append(names, name)
		}
	}
	return names, nil
}

// modeUnits pairs every offering that runs spec with its shared Waldur client and backend; the
// problems are those of every offering (a backend's are reported for the first mode using it).
func (a *Agent) modeUnits(cfg *config.Config, o Options, spec modes.Spec, sh *shared) ([]*modes.Unit, config.Errors) {
	var units []*modes.Unit
	var problems config.Errors
	for _, off := range cfg.Offerings {
		key, name := spec.BackendKey(off)
		if why := spec.Skip(off); why != "" {
			if o.Mode != modes.ModeAll {
				a.log.Info(why, zap.String("offering", off.Name), zap.String("key", key))
			}
			continue
		}
		set, err := a.sharedBackend(off, o, key, name, sh)
		if err != nil {
			problems = append(problems, asProblems(cfg, err)...)
			continue
		}
		if err := spec.Requires(set); err != nil {
			problems = append(problems, &config.Error{Path: cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].%s", off.Index, key), Problem: err.Error()})
			continue
		}
		wc := sh.waldur[off.Index]
		if wc == nil {
			if wc, err = a.waldurClient(cfg, off, o, sh.http); err != nil {
				problems = append(problems, asProblems(cfg, err)...)
				continue
			}
			sh.waldur[off.Index] = wc
		}
		log := a.taskLog(o, spec.Name).With(zap.String("offering", off.Name), zap.String("backend", name))
		units = append(units, &modes.Unit{Offering: off, Waldur: wc, Backend: set, Log: log})
	}
	return units, problems
}

// taskLog is the logger of one mode's work; with -m all it names the mode as "task".
func (a *Agent) taskLog(o Options, mode string) *zap.Logger {
	if o.Mode == modes.ModeAll {
		return a.log.With(zap.String("task", mode))
	}
	return a.log
}

// sharedBackend returns the offering's backend instance of that name, creating it on first use.
// A backend that failed to build is reported once: later calls return errReportedAlready.
func (a *Agent) sharedBackend(off config.Offering, o Options, key, name string, sh *shared) (backends.Set, error) {
	id := fmt.Sprintf("%d/%s", off.Index, name)
	if set, ok := sh.backends[id]; ok {
		return set, nil
	}
	if sh.failed[id] {
		return backends.Set{}, errReportedAlready
	}
	set, err := a.backend(sh.reg, off, o, key, name)
	if err != nil {
		sh.failed[id] = true
		return backends.Set{}, err
	}
	sh.backends[id] = set
	return set, nil
}

// modePeriod is the mode's cycle period: as resolved by the command line (--period, else the
// incumbent's environment variable), else --period for every mode, else the default.
func modePeriod(spec modes.Spec, o Options) time.Duration {
	if p, ok := o.Periods[spec.Name]; ok {
		return p
	}
	if o.Period > 0 {
		return o.Period
	}
	return spec.Period
}
