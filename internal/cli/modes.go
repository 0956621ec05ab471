package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
)

// modeAll is `-m all`: every mode each offering configures, in one process.
const modeAll = "all"

// task is one mode's work over its offerings: a periodic modes.Runner, or a long-running
// listener. Run stops gracefully when ctx is cancelled and at once when fence is (nil = never).
type task interface {
	Name() string
	Run(ctx, fence context.Context) error
	RunOnce(ctx context.Context) error
}

// taskParams is what a mode's constructor gets: its own Env (Env.Mode is the mode), the units of
// the offerings that run it (Waldur clients and backends shared with the other modes), its
// period and the registration function shared by all modes of the process.
type taskParams struct {
	env      *modes.Env
	units    []*modes.Unit
	period   time.Duration
	timeout  time.Duration
	tick     time.Duration                                  // heartbeat interval
	register func(ctx context.Context, u *modes.Unit) error // nil in a dry run
	onCycle  func(u *modes.Unit, err error)
	// registrar is the process's registrar (the event mode needs the identity for its
	// subscriptions); register is nil in a dry run, registrar never.
	registrar *modes.Registrar
}

// modeSpec describes a runnable mode.
type modeSpec struct {
	name    string
	period  time.Duration // default; WALDUR_SITE_AGENT_<MODE>_PERIOD_MINUTES overrides
	backend func(off config.Offering) (key, name string)
	role    func(s backends.Set) error
	newTask func(p taskParams) task
	// build, when set, replaces newTask for a mode that needs more than its units (the event
	// mode adds each offering's second backend); its errors are configuration errors.
	build func(a *agent, cfg *config.Config, o buildOptions, sh *shared, p taskParams) (task, error)
}

// modeSpecs lists the modes this build can run, in the order -m all starts them. A mode that
// offeringModes names but that has no entry here is not started (it is logged).
func modeSpecs() []modeSpec {
	return []modeSpec{
		{name: "order_process", period: 5 * time.Minute, backend: orderBackend, role: canProvision,
			newTask: periodic(func(env *modes.Env) modes.Mode { return &modes.Orders{Env: env} })},
		{name: "membership_sync", period: 5 * time.Minute, backend: membershipBackend, role: canSync,
			newTask: periodic(func(env *modes.Env) modes.Mode { return &modes.Membership{Env: env} })},
		{name: "report", period: 30 * time.Minute, backend: reportBackend, role: canReport,
			newTask: periodic(func(env *modes.Env) modes.Mode { return &modes.Report{Env: env} })},
		eventSpec(),
	}
}

// lookupMode finds a registered mode by name.
func lookupMode(name string) (modeSpec, bool) {
	for _, s := range modeSpecs() {
		if s.name == name {
			return s, true
		}
	}
	return modeSpec{}, false
}

// modeNames lists the registered modes, for messages.
func modeNames() []string {
	var names []string
	for _, s := range modeSpecs() {
		names = append(names, s.name)
	}
	return names
}

// offeringModes is the one place that decides which modes an offering configures: the polling
// modes whose backend key is set (order_process only while orders are not event-driven, as the
// incumbent's loop skips stomp_enabled offerings; membership_sync only while membership is not),
// and event_process where stomp_enabled is true and it has an order or event-driven membership
// backend.
func offeringModes(off config.Offering) []string {
	var out []string
	if off.OrderBackend != "" && !off.StompEnabled {
		out = append(out, "order_process")
	}
	if off.MembershipBackend != "" && off.MembershipPolling() {
		out = append(out, "membership_sync")
	}
	if off.ReportingBackend != "" {
		out = append(out, "report")
	}
	if _, name := eventBackend(off); off.StompEnabled && name != "" {
		out = append(out, "event_process")
	}
	return out
}

// skipReason says why an offering does not run mode ("" when it does).
func skipReason(mode string, off config.Offering) string {
	for _, m := range offeringModes(off) {
		if m == mode {
			return ""
		}
	}
	if mode == "membership_sync" && off.MembershipBackend != "" {
		return "offering syncs membership through events; skipped"
	}
	if mode == "order_process" && off.OrderBackend != "" {
		return "offering is served by event_process; skipped"
	}
	if mode == "event_process" && !off.StompEnabled {
		return "offering does not use events (stomp_enabled is false); skipped"
	}
	return "offering has no backend for this mode; skipped"
}

// periodic builds the task of a polling mode: the shared runner.
func periodic(newMode func(env *modes.Env) modes.Mode) func(p taskParams) task {
	return func(p taskParams) task {
		return &modes.Runner{Env: p.env, Mode: newMode(p.env), Units: p.units, Period: p.period, Timeout: p.timeout,
			Tick: p.tick, Register: p.register, OnCycle: p.onCycle}
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

// backendKey returns the config key and value naming the backend for a mode.
func backendKey(mode string, off config.Offering) (key, name string) {
	if s, ok := lookupMode(mode); ok {
		return s.backend(off)
	}
	return "", ""
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
