package waldursim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// table keeps rows by normalized UUID in insertion order.
type table[T any] struct {
	keys []string
	rows map[string]*T
}

func (t *table[T]) put(id string, v *T) {
	if t.rows == nil {
		t.rows = map[string]*T{}
	}
	if _, ok := t.rows[id]; !ok {
		t.keys = append(t.keys, id)
	}
	t.rows[id] = v
}

func (t *table[T]) get(id string) (*T, bool) {
	v, ok := t.rows[id]
	return v, ok
}

func (t *table[T]) del(id string) {
	if _, ok := t.rows[id]; !ok {
		return
	}
	delete(t.rows, id)
	for i, k := range t.keys {
		if k == id {
			t.keys = append(t.keys[:i], t.keys[i+1:]...)
			return
		}
	}
}

func (t *table[T]) all() []*T {
	out := make([]*T, 0, len(t.keys))
	for _, k := range t.keys {
		out = append(out, t.rows[k])
	}
	return out
}

// agentService is the stored form of a site-agent service.
type agentService struct {
	UUID, IdentityUUID, Name, Mode, State string
	Processors                            []agentProcessor
	Created, Modified                     time.Time
}

// agentProcessor is the stored form of a site-agent processor.
type agentProcessor struct {
	UUID, Name, BackendType, BackendVersion string
	Created, Modified                       time.Time
}

// currentUser is the authenticated user users/me returns.
type currentUser struct {
	User        User
	Permissions []Permission
}

// state is everything the simulator stores. It is guarded by Server.mu.
type state struct {
	customers        table[Customer]
	projects         table[Project]
	users            table[User]
	members          map[string]map[string]string // project -> user -> role
	offerings        table[Offering]
	providers        table[ServiceProvider]
	keys             table[SSHKey]
	offeringUsers    table[OfferingUser]
	resources        table[Resource]
	orders           table[Order]
	usages           table[ComponentUsage]
	limits           table[UserUsageLimit]
	serviceAccounts  table[ServiceAccount]
	courseAccounts   table[CourseAccount]
	identities       table[Identity]
	services         table[agentService]
	subscriptions    table[EventSubscription]
	backendResources table[BackendResource]
	resourceProjects table[ResourceProject]
	grants           map[string][]RoleGrant        // resource or resource project -> roles
	syncStatuses     map[string][]MemberSyncStatus // resource -> last reported statuses
	me               currentUser
	rng              *rand.Rand
	pending          []event // published when the lock is released (events.go)
}

func newState() *state {
	return &state{
		members: map[string]map[string]string{},
		grants:  map[string][]RoleGrant{}, syncStatuses: map[string][]MemberSyncStatus{},
		rng: rand.New(rand.NewPCG(0x5a17e, 0xa6e17)),
	}
}

// newUUID returns a random (deterministically seeded) version-4 UUID as 32 hex digits.
func (st *state) newUUID() string {
	hi, lo := st.rng.Uint64(), st.rng.Uint64()
	hi = hi&^0xf000 | 0x4000
	lo = lo&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%016x%016x", hi, lo)
}

// normUUID accepts a UUID with or without dashes, in any case, like Django's UUID handling,
// and returns it as 32 lower-case hex digits.
func normUUID(s string) (string, bool) {
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(h) != 32 {
		return "", false
	}
	if strings.Count(s, "-") != 0 && !isDashedUUID(s) {
		return "", false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return h, true
}

func isDashedUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for _, i := range []int{8, 13, 18, 23} {
		if s[i] != '-' {
			return false
		}
	}
	return true
}

// idOr normalizes id, or makes a new one when id is empty. A malformed id panics: it is a
// seeding mistake in a test.
func (st *state) idOr(id string) string {
	if id == "" {
		return st.newUUID()
	}
	n, ok := normUUID(id)
	if !ok {
		panic(fmt.Sprintf("waldursim: malformed UUID %q", id))
	}
	return n
}

// slugify mimics Django's slugify, truncated like Waldur's slug fields.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case r == '_' || r == '-' || r == ' ':
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 50 {
		s = strings.TrimRight(s[:50], "-")
	}
	if s == "" {
		s = "item"
	}
	return s
}

// uniqueSlug appends -2, -3, … until taken reports false.
func uniqueSlug(base string, taken func(string) bool) string {
	s := base
	for i := 2; taken(s); i++ {
		s = fmt.Sprintf("%s-%d", base, i)
	}
	return s
}

// cloneAny deep-copies JSON-like values so stored state never aliases what callers hold.
func cloneAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneAny(e)
		}
		return out
	default:
		return v
	}
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

func cloneFloats(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
