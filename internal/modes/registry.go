package modes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
)

// Mode names, as -m takes them (the incumbent's).
const (
	ModeOrderProcess   = "order_process"
	ModeMembershipSync = "membership_sync"
	ModeReport         = "report"
	ModeEventProcess   = "event_process"
	// ModeAll is `-m all`: every mode each offering configures, in one process.
	ModeAll = "all"
)

// Spec is everything the agent needs to know about a mode to start it. Adding a mode means
// adding its Spec to Specs (and the configuration keys it reads to internal/config); nothing
// else names a mode.
type Spec struct {
	Name   string
	Period time.Duration // default cycle period
	// PeriodEnv is the incumbent's environment variable for the period, in (fractional) minutes.
	PeriodEnv string
	// Processor is the processor name registered in Waldur (the incumbent's, so that Waldur's
	// agent pages look the same after a migration).
	Processor string
	// BackendKey is the configuration key that names the offering's backend for this mode, and
	// its value ("" when the offering sets none).
	BackendKey func(off config.Offering) (key, name string)
	// Requires checks that the backend can play the mode's role.
	Requires func(s backends.Set) error
	// Skip says why an offering does not run the mode; "" when it does. It is the one place that
	// decides which modes an offering configures.
	Skip func(off config.Offering) string
	// New builds the mode's runner over the units assembled for it; its errors are
	// configuration errors.
	New func(p TaskParams) (*Runner, error)
	// OnePass names the incumbent's console scripts whose job is one pass of this mode
	// (waldur_sync_offering_users, …): the binary, called by one of them, runs the mode once.
	OnePass []string
	// History says the mode reports the months of Env.History when it is set (the incumbent's
	// waldur_site_load_historical_usage is a pass of it over the months given).
	History bool
}

// TaskParams is what a Spec's New gets: its own Env (Env.Mode is the mode), the units of the
// offerings that run it (Waldur clients and backends shared with the other modes of the
// process), its timings and the registration shared by all modes.
type TaskParams struct {
	Env      *Env
	Units    []*Unit
	Period   time.Duration
	Timeout  time.Duration
	Tick     time.Duration                            // heartbeat interval
	Register func(ctx context.Context, u *Unit) error // nil in a dry run
	OnCycle  func(u *Unit, err error)
	// Registrar is the process's registrar (the event mode needs the identity for its
	// subscriptions); Register is nil in a dry run, Registrar never.
	Registrar *Registrar
	Config    *config.Config
	DryRun    bool
	// Backend returns the offering's backend of that name, shared with the other modes, for a
	// mode that uses a second backend (event_process's membership side); key names the
	// configuration key in errors.
	Backend func(off config.Offering, key, name string) (backends.Set, error)
}

// Specs lists the modes, in the order -m all starts them (orders first, so that resources
// created in a --once pass are synced and reported in it too).
func Specs() []Spec {
	return []Spec{
		{Name: ModeOrderProcess, Period: 5 * time.Minute, PeriodEnv: periodEnv(ModeOrderProcess), Processor: "OfferingOrderProcessor",
			BackendKey: orderBackend, Requires: canProvision, Skip: skipOrders, New: polling(func(env *Env) Mode { return &Orders{Env: env} })},
		{Name: ModeMembershipSync, Period: 5 * time.Minute, PeriodEnv: periodEnv(ModeMembershipSync), Processor: "OfferingMembershipProcessor",
			BackendKey: membershipBackend, Requires: canSync, Skip: skipMembership, New: polling(func(env *Env) Mode { return &Membership{Env: env} }),
			OnePass: []string{"waldur_sync_offering_users", "waldur_sync_resource_limits"}},
		{Name: ModeReport, Period: 30 * time.Minute, PeriodEnv: periodEnv(ModeReport), Processor: "OfferingReportProcessor",
			BackendKey: reportBackend, Requires: canReport, Skip: skipReport, New: polling(func(env *Env) Mode { return &Report{Env: env} }),
			History: true},
		eventModeSpec(),
	}
}

// Lookup finds a mode by name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names lists the modes, for messages and help.
func Names() []string {
	var names []string
	for _, s := range Specs() {
		names = append(names, s.Name)
	}
	return names
}

// OfferingModes lists the modes the offering configures, in start order.
func OfferingModes(off config.Offering) []string {
	var out []string
	for _, s := range Specs() {
		if s.Skip(off) == "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// NothingToDo explains, as a configuration error, why no offering runs mode (or ModeAll).
func NothingToDo(cfg *config.Config, mode string) error {
	if mode == ModeAll {
		return &config.Error{Path: cfg.Path, Key: "offerings", Problem: "no offering sets order_processing_backend, membership_sync_backend or reporting_backend, so mode all has nothing to do"}
	}
	for _, off := range cfg.Offerings {
		if ServedByEvents(mode, off) {
			return &config.Error{Path: cfg.Path, Key: "stomp_enabled",
				Problem: fmt.Sprintf("the offerings of mode %s are served by events: run -m %s (or -m all)", mode, ModeEventProcess)}
		}
	}
	key := ""
	if s, ok := Lookup(mode); ok {
		key, _ = s.BackendKey(config.Offering{})
	}
	return &config.Error{Path: cfg.Path, Key: key, Problem: fmt.Sprintf("no offering sets %s, so mode %s has nothing to do", key, mode)}
}

// periodEnv is WALDUR_SITE_AGENT_<MODE>_PERIOD_MINUTES.
func periodEnv(mode string) string {
	return "WALDUR_SITE_AGENT_" + strings.ToUpper(mode) + "_PERIOD_MINUTES"
}

// Why an offering does not run a mode.
const (
	skipNoBackend         = "offering has no backend for this mode; skipped"
	skipOrdersByEvents    = "offering is served by event_process; skipped"
	skipMembershipByEvent = "offering syncs membership through events; skipped"
	skipNoEvents          = "offering does not use events (stomp_enabled is false); skipped"
)

// ServedByEvents reports whether the offering would run mode, a polling mode, but for its
// events doing that work (event_process).
func ServedByEvents(mode string, off config.Offering) bool {
	s, ok := Lookup(mode)
	if !ok {
		return false
	}
	why := s.Skip(off)
	return why == skipOrdersByEvents || why == skipMembershipByEvent
}

// skipOrders: order_process runs only while orders are not event-driven, as the incumbent's
// loop skips stomp_enabled offerings.
func skipOrders(off config.Offering) string {
	switch {
	case off.OrderBackend == "":
		return skipNoBackend
	case off.StompEnabled:
		return skipOrdersByEvents
	}
	return ""
}

// skipMembership: membership_sync runs only while membership is not event-driven.
func skipMembership(off config.Offering) string {
	switch {
	case off.MembershipBackend == "":
		return skipNoBackend
	case !off.MembershipPolling():
		return skipMembershipByEvent
	}
	return ""
}

func skipReport(off config.Offering) string {
	if off.ReportingBackend == "" {
		return skipNoBackend
	}
	return ""
}

// polling builds the runner of a polling mode.
func polling(newMode func(env *Env) Mode) func(p TaskParams) (*Runner, error) {
	return func(p TaskParams) (*Runner, error) {
		return &Runner{Env: p.Env, Mode: newMode(p.Env), Units: p.Units, Period: p.Period, Timeout: p.Timeout,
			Tick: p.Tick, Register: p.Register, OnCycle: p.OnCycle}, nil
	}
}

func orderBackend(off config.Offering) (string, string) {
	return "order_processing_backend", off.OrderBackend
}

func membershipBackend(off config.Offering) (string, string) {
	return "membership_sync_backend", off.MembershipBackend
}

func reportBackend(off config.Offering) (string, string) {
	return "reporting_backend", off.ReportingBackend
}

func canProvision(s backends.Set) error {
	if s.Provisioner == nil {
		return fmt.Errorf("backend %q cannot process orders (it does not provision resources)", s.Name)
	}
	return nil
}

func canSync(s backends.Set) error {
	if s.Members == nil && s.Projects == nil && s.Status == nil && s.Reconciler == nil && s.Limits == nil {
		return fmt.Errorf("backend %q has nothing to sync (no membership, resource projects, status, limits or repair)", s.Name)
	}
	return nil
}

func canReport(s backends.Set) error {
	if s.Usage == nil {
		return fmt.Errorf("backend %q cannot report usage", s.Name)
	}
	return nil
}
