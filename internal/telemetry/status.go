package telemetry

import (
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/secret"
)

// Status is what /status shows, kept in memory: each offering's modes and their last and next
// cycle, its orders in flight and pending, its upstreams' transient failures and event
// listeners, the leader, reloads and the last errors. The runner, order processing and the
// agent feed it as they work; serving the page reads it and calls no upstream. It is
// process-wide (a reload keeps it, as it keeps the metrics). A nil *Status records nothing.
// Every text it keeps passes through the secret scrubber.
type Status struct {
	mu        sync.Mutex
	now       func() time.Time
	version   string
	started   time.Time
	offerings []*offeringStatus // in the order they were declared (the configuration's)
	errors    errorRing
	leader    func() Leader
	reloads   ReloadView
}

// maxErrors bounds the ring of last errors; maxText bounds one message.
const (
	maxErrors = 25
	maxText   = 600
)

type offeringStatus struct {
	uuid, name string
	modes      []*modeStatus
	inflight   map[string]OrderView // by order UUID
	pending    int
	upstreams  []*upstreamStatus
	listeners  []*ListenerView
}

type modeStatus struct {
	ModeView
}

type upstreamStatus struct {
	UpstreamView
}

// NewStatus returns an empty recorder for a program of that version.
func NewStatus(version string) *Status { return NewStatusClock(version, time.Now) }

// NewStatusClock is NewStatus with the clock that stamps events (tests).
func NewStatusClock(version string, now func() time.Time) *Status {
	return &Status{now: now, version: version, started: now(), errors: errorRing{size: maxErrors}}
}

// SetLeader says how to describe this replica's leadership (read when the page is served).
func (s *Status) SetLeader(f func() Leader) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leader = f
}

// Declare records that mode runs for the offering every period; first is true the first time
// this process declares that pair (a reload declares again). Names follow the last declaration.
func (s *Status) Declare(mode string, period time.Duration, uuid, name string) (first bool) {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.offering(uuid)
	if o == nil {
		o = &offeringStatus{uuid: OfferingLabel(uuid), inflight: map[string]OrderView{}}
		s.offerings = append(s.offerings, o)
	}
	o.name = name
	if m := o.mode(mode); m != nil {
		m.PeriodSeconds = period.Seconds()
		return false
	}
	o.modes = append(o.modes, &modeStatus{ModeView{Mode: mode, PeriodSeconds: period.Seconds()}})
	return true
}

// Retain forgets the offerings whose UUIDs are not listed (dropped by a reload) and reports
// which were forgotten.
func (s *Status) Retain(uuids []string) (forgotten []string) {
	if s == nil {
		return nil
	}
	keep := map[string]bool{}
	for _, u := range uuids {
		keep[OfferingLabel(u)] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.offerings[:0]
	for _, o := range s.offerings {
		if keep[o.uuid] {
			kept = append(kept, o)
		} else {
			forgotten = append(forgotten, o.uuid)
		}
	}
	s.offerings = kept
	return forgotten
}

// CycleStarted records that a cycle of mode began for the offering.
func (s *Status) CycleStarted(mode, uuid string) {
	s.withMode(mode, uuid, func(m *modeStatus) {
		at := s.now()
		m.Running, m.RunningSince = true, &at
	})
}

// CycleFinished records a cycle's end: when it started, how long it took, and its error (nil:
// it succeeded). The caller adds a failure worth reporting to the last errors (Error).
func (s *Status) CycleFinished(mode, uuid string, started time.Time, took time.Duration, err error) {
	s.withMode(mode, uuid, func(m *modeStatus) {
		c := CycleView{Started: started, Finished: started.Add(took), DurationSeconds: took.Seconds(), Result: "ok"}
		m.Cycles++
		if err != nil {
			c.Result, c.Error = "error", clip(err.Error())
			m.Failures++
		}
		m.Running, m.RunningSince, m.Last = false, nil, &c
	})
}

// NextCycle records when mode's next cycle starts, for every offering that runs it.
func (s *Status) NextCycle(mode string, at time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.offerings {
		if m := o.mode(mode); m != nil {
			next := at
			m.Next = &next
		}
	}
}

// OrderStarted records an order being worked on; OrderEnded that the work stopped (finished or
// left for a later pass).
func (s *Status) OrderStarted(uuid string, o OrderView) {
	s.withOffering(uuid, func(off *offeringStatus) {
		o.Since = s.now()
		off.inflight[o.UUID] = o
	})
}

// OrderEnded: see OrderStarted.
func (s *Status) OrderEnded(uuid, orderUUID string) {
	s.withOffering(uuid, func(off *offeringStatus) { delete(off.inflight, orderUUID) })
}

// OrdersPending records how many open orders wait for the agent.
func (s *Status) OrdersPending(uuid string, n int) {
	s.withOffering(uuid, func(off *offeringStatus) { off.pending = n })
}

// Upstream records the outcome of one call to an upstream ("waldur", a backend's name, or a
// backend's need such as "access"): failed says it did not work (no answer, 429, 5xx, the
// service down or refusing); detail says what failed. The upstream counts as degraded until a
// call succeeds.
func (s *Status) Upstream(uuid, name string, failed bool, detail string) {
	s.withOffering(uuid, func(off *offeringStatus) {
		u := off.upstream(name)
		at := s.now()
		u.Calls++
		if !failed {
			u.LastOK, u.Degraded = &at, false
			return
		}
		u.Errors++
		u.LastError, u.LastErrorAt, u.Degraded = clip(detail), &at, true
	})
}

// Recovered marks an upstream the offering has recorded as no longer degraded, without
// counting a call (a need that was restored); it records nothing for an unknown upstream.
func (s *Status) Recovered(uuid, name string) {
	s.withOffering(uuid, func(off *offeringStatus) {
		for _, u := range off.upstreams {
			if u.Upstream == name && u.Degraded {
				at := s.now()
				u.LastOK, u.Degraded = &at, false
			}
		}
	})
}

// Listener records an event listener's state (object type typ of the offering).
func (s *Status) Listener(uuid, typ string, connected bool) {
	s.withOffering(uuid, func(off *offeringStatus) {
		at := s.now()
		for _, l := range off.listeners {
			if l.ObjectType == typ {
				if l.Connected != connected {
					l.Connected, l.Since = connected, at
				}
				return
			}
		}
		off.listeners = append(off.listeners, &ListenerView{ObjectType: typ, Connected: connected, Since: at})
	})
}

// Reloaded records a configuration reload (err nil: applied; otherwise the running
// configuration stays, and the error goes to the last errors).
func (s *Status) Reloaded(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	at := s.now()
	s.reloads.Last, s.reloads.OK = &at, err == nil
	if err == nil {
		s.reloads.Succeeded++
	} else {
		s.reloads.Failed++
	}
	s.mu.Unlock()
	if err != nil {
		s.Error("", "reload", err.Error())
	}
}

// Error adds an error to the ring of last errors: the offering's UUID ("" for the process),
// where it happened (a mode, "order", "reload", …) and what it said, scrubbed of secrets.
func (s *Status) Error(uuid, source, message string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := ""
	if o := s.offering(uuid); o != nil {
		name = o.name
	}
	s.errors.add(ErrorView{At: s.now(), Offering: name, Source: source, Message: clip(message)})
}

func (s *Status) withOffering(uuid string, f func(*offeringStatus)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.offering(uuid); o != nil {
		f(o)
	}
}

func (s *Status) withMode(mode, uuid string, f func(*modeStatus)) {
	s.withOffering(uuid, func(o *offeringStatus) {
		if m := o.mode(mode); m != nil {
			f(m)
		}
	})
}

// offering finds an offering by UUID. Callers hold mu.
func (s *Status) offering(uuid string) *offeringStatus {
	id := OfferingLabel(uuid)
	for _, o := range s.offerings {
		if o.uuid == id {
			return o
		}
	}
	return nil
}

func (o *offeringStatus) mode(mode string) *modeStatus {
	for _, m := range o.modes {
		if m.Mode == mode {
			return m
		}
	}
	return nil
}

func (o *offeringStatus) upstream(name string) *upstreamStatus {
	for _, u := range o.upstreams {
		if u.Upstream == name {
			return u
		}
	}
	u := &upstreamStatus{UpstreamView{Upstream: name}}
	o.upstreams = append(o.upstreams, u)
	return u
}

// clip scrubs secrets from text and bounds its length.
func clip(text string) string {
	text = secret.Scrub(text)
	if r := []rune(text); len(r) > maxText {
		text = string(r[:maxText]) + "…"
	}
	return text
}

// errorRing keeps the last size errors.
type errorRing struct {
	size  int
	items []ErrorView
	next  int
	total int
}

func (r *errorRing) add(e ErrorView) {
	r.total++
	if len(r.items) < r.size {
		r.items = append(r.items, e)
		return
	}
	r.items[r.next] = e
	r.next = (r.next + 1) % r.size
}

// newestFirst lists the kept errors, the most recent first.
func (r *errorRing) newestFirst() []ErrorView {
	out := make([]ErrorView, 0, len(r.items))
	for i := range r.items {
		j := (r.next - 1 - i + 2*len(r.items)) % len(r.items)
		out = append(out, r.items[j])
	}
	return out
}
