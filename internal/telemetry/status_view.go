package telemetry

import (
	"slices"
	"strings"
	"time"
)

// Snapshot is the status at one moment: what /status.json returns and /status renders.
type Snapshot struct {
	Version   string         `json:"version"`
	Generated time.Time      `json:"generated"`
	Started   time.Time      `json:"started"`
	Leader    Leader         `json:"leader"`
	Reloads   ReloadView     `json:"reloads"`
	Offerings []OfferingView `json:"offerings"`
	// Degraded lists the upstreams of every offering whose last call failed.
	Degraded []UpstreamView `json:"degraded_upstreams"`
	Errors   []ErrorView    `json:"last_errors"` // newest first
	// ErrorsTotal counts every error recorded since the start (Errors keeps the last ones).
	ErrorsTotal int `json:"errors_total"`
}

// Leader describes this replica's part in leader election.
type Leader struct {
	Election bool   `json:"election"` // false: leader election is off, this process works
	Leading  bool   `json:"leading"`
	Identity string `json:"identity,omitempty"` // this replica's
	Holder   string `json:"holder,omitempty"`   // the lease holder last observed
	// Acquired is when the holder took the lease (the Lease's acquireTime), when known.
	Acquired *time.Time `json:"acquired,omitempty"`
}

// ReloadView counts configuration reloads.
type ReloadView struct {
	Succeeded int        `json:"succeeded"`
	Failed    int        `json:"failed"`
	Last      *time.Time `json:"last,omitempty"`
	OK        bool       `json:"last_ok"`
}

// OfferingView is one offering.
type OfferingView struct {
	UUID      string         `json:"uuid"`
	Name      string         `json:"name"`
	Modes     []ModeView     `json:"modes"`
	Pending   int            `json:"orders_pending"`
	InFlight  []OrderView    `json:"orders_in_flight"`
	Upstreams []UpstreamView `json:"upstreams"`
	Listeners []ListenerView `json:"event_listeners,omitempty"`
}

// ModeView is one mode of an offering.
type ModeView struct {
	Mode          string     `json:"mode"`
	PeriodSeconds float64    `json:"period_seconds"`
	Running       bool       `json:"running"`
	RunningSince  *time.Time `json:"running_since,omitempty"`
	Last          *CycleView `json:"last_cycle,omitempty"`
	Next          *time.Time `json:"next_cycle,omitempty"`
	Cycles        int        `json:"cycles"`
	Failures      int        `json:"failures"`
}

// CycleView is one finished cycle.
type CycleView struct {
	Started         time.Time `json:"started"`
	Finished        time.Time `json:"finished"`
	DurationSeconds float64   `json:"duration_seconds"`
	Result          string    `json:"result"` // ok or error
	Error           string    `json:"error,omitempty"`
}

// OrderView is an order being worked on.
type OrderView struct {
	UUID         string    `json:"uuid"`
	Type         string    `json:"type"`
	ResourceUUID string    `json:"resource_uuid,omitempty"`
	ResourceName string    `json:"resource_name,omitempty"`
	Since        time.Time `json:"since"`
}

// UpstreamView is what the agent saw of one upstream of an offering.
type UpstreamView struct {
	OfferingUUID string     `json:"offering_uuid,omitempty"`
	OfferingName string     `json:"offering_name,omitempty"`
	Upstream     string     `json:"upstream"`
	Degraded     bool       `json:"degraded"` // the last call failed
	Calls        int        `json:"calls"`
	Errors       int        `json:"errors"` // calls that failed
	LastOK       *time.Time `json:"last_ok,omitempty"`
	LastErrorAt  *time.Time `json:"last_error_at,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
}

// ListenerView is one event listener.
type ListenerView struct {
	ObjectType string    `json:"object_type"`
	Connected  bool      `json:"connected"`
	Since      time.Time `json:"since"`
}

// ErrorView is one of the last errors.
type ErrorView struct {
	At       time.Time `json:"at"`
	Offering string    `json:"offering,omitempty"`
	Source   string    `json:"source"`
	Message  string    `json:"message"`
}

// Snapshot copies the status (the leader function is called outside the lock).
func (s *Status) Snapshot() Snapshot {
	if s == nil {
		return Snapshot{Generated: time.Now()}
	}
	s.mu.Lock()
	leader := s.leader
	snap := Snapshot{Version: s.version, Generated: s.now(), Started: s.started, Reloads: s.reloads,
		Errors: s.errors.newestFirst(), ErrorsTotal: s.errors.total}
	for _, o := range s.offerings {
		v := o.view()
		snap.Offerings = append(snap.Offerings, v)
		for _, u := range v.Upstreams {
			if u.Degraded {
				snap.Degraded = append(snap.Degraded, u)
			}
		}
	}
	s.mu.Unlock()
	snap.Leader = Leader{Leading: true}
	if leader != nil {
		snap.Leader = leader()
	}
	return snap
}

// view copies an offering. Callers hold the status lock.
func (o *offeringStatus) view() OfferingView {
	v := OfferingView{UUID: o.uuid, Name: o.name, Pending: o.pending}
	for _, m := range o.modes {
		mv := m.ModeView
		if mv.Last != nil {
			last := *mv.Last
			mv.Last = &last
		}
		v.Modes = append(v.Modes, mv)
	}
	for _, ord := range o.inflight {
		v.InFlight = append(v.InFlight, ord)
	}
	slices.SortFunc(v.InFlight, func(a, b OrderView) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	for _, u := range o.upstreams {
		uv := u.UpstreamView
		uv.OfferingUUID, uv.OfferingName = o.uuid, o.name
		v.Upstreams = append(v.Upstreams, uv)
	}
	for _, l := range o.listeners {
		v.Listeners = append(v.Listeners, *l)
	}
	return v
}
