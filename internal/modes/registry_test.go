package modes

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/config"
)

// Which modes an offering runs, and why it skips the others: the incumbent's rules (stomp_enabled
// moves orders to event_process; membership follows it unless stomp_membership_sync_enabled says
// otherwise).
func TestOfferingModesAndSkipReasons(t *testing.T) {
	yes, no := true, false
	all := config.Offering{OrderBackend: "a", MembershipBackend: "b", ReportingBackend: "c"}
	with := func(f func(*config.Offering)) config.Offering { o := all; f(&o); return o }
	cases := []struct {
		name string
		off  config.Offering
		want []string
		skip map[string]string // mode → reason, for the modes not run
	}{
		{"polling", all, []string{ModeOrderProcess, ModeMembershipSync, ModeReport},
			map[string]string{ModeEventProcess: skipNoEvents}},
		{"events", with(func(o *config.Offering) { o.StompEnabled = true }), []string{ModeReport, ModeEventProcess},
			map[string]string{ModeOrderProcess: skipOrdersByEvents, ModeMembershipSync: skipMembershipByEvent}},
		{"events, membership polled", with(func(o *config.Offering) { o.StompEnabled, o.StompMembershipSyncEnabled = true, &no }),
			[]string{ModeMembershipSync, ModeReport, ModeEventProcess}, map[string]string{ModeOrderProcess: skipOrdersByEvents}},
		{"membership events only", config.Offering{MembershipBackend: "b", StompEnabled: true}, []string{ModeEventProcess},
			map[string]string{ModeOrderProcess: skipNoBackend, ModeMembershipSync: skipMembershipByEvent, ModeReport: skipNoBackend}},
		{"stomp without a backend", config.Offering{ReportingBackend: "c", StompEnabled: true, StompMembershipSyncEnabled: &yes},
			[]string{ModeReport}, map[string]string{ModeOrderProcess: skipNoBackend, ModeEventProcess: skipNoBackend}},
		{"nothing", config.Offering{}, nil, map[string]string{ModeOrderProcess: skipNoBackend, ModeEventProcess: skipNoEvents}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OfferingModes(tc.off)); diff != "" {
				t.Errorf("modes (-want +got):\n%s", diff)
			}
			for mode, want := range tc.skip {
				s, _ := Lookup(mode)
				if got := s.Skip(tc.off); got != want {
					t.Errorf("%s: skip %q, want %q", mode, got, want)
				}
			}
		})
	}
}

func TestServedByEvents(t *testing.T) {
	events := config.Offering{OrderBackend: "a", MembershipBackend: "b", StompEnabled: true}
	for mode, want := range map[string]bool{ModeOrderProcess: true, ModeMembershipSync: true, ModeReport: false, ModeEventProcess: false, "nope": false} {
		if got := ServedByEvents(mode, events); got != want {
			t.Errorf("%s: %v, want %v", mode, got, want)
		}
	}
	if ServedByEvents(ModeOrderProcess, config.Offering{OrderBackend: "a"}) {
		t.Error("a polled offering is not served by events")
	}
}

// The period variables are the incumbent's.
func TestPeriodVariables(t *testing.T) {
	want := map[string]string{
		ModeOrderProcess:   "WALDUR_SITE_AGENT_ORDER_PROCESS_PERIOD_MINUTES",
		ModeMembershipSync: "WALDUR_SITE_AGENT_MEMBERSHIP_SYNC_PERIOD_MINUTES",
		ModeReport:         "WALDUR_SITE_AGENT_REPORT_PERIOD_MINUTES",
		ModeEventProcess:   "WALDUR_SITE_AGENT_RECONCILIATION_PERIOD_MINUTES",
	}
	got := map[string]string{}
	for _, s := range Specs() {
		got[s.Name] = s.PeriodEnv
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A mode no offering runs is a configuration error naming the key to set.
func TestNothingToDoNamesTheKey(t *testing.T) {
	events := &config.Config{Path: "c.yaml", Offerings: []config.Offering{{OrderBackend: "a", StompEnabled: true}}}
	plain := &config.Config{Path: "c.yaml", Offerings: []config.Offering{{OrderBackend: "a"}}}
	for _, tc := range []struct {
		cfg       *config.Config
		mode, key string
		problem   string
	}{
		{plain, ModeAll, "offerings", "so mode all has nothing to do"},
		{events, ModeOrderProcess, "stomp_enabled", "served by events: run -m event_process (or -m all)"},
		{plain, ModeReport, "reporting_backend", "no offering sets reporting_backend, so mode report has nothing to do"},
		{plain, ModeEventProcess, "stomp_enabled", "no offering sets stomp_enabled"},
	} {
		err := NothingToDo(tc.cfg, tc.mode)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(ce.Problem, tc.problem) {
			t.Errorf("%s: %v; want key %s and %q", tc.mode, err, tc.key, tc.problem)
		}
	}
}
