package backendtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Options describe the backend under test.
type Options struct {
	// New returns a fresh backend (called once per subtest).
	New func(t *testing.T) backends.Backend
	// Resource returns a valid resource for the backend; n makes names distinct.
	Resource func(n int) backends.Resource
	// Members are usernames that exist on the backend's identity side (for membership tests).
	Members []string
	// Timeout bounds each subtest (default 2 minutes).
	Timeout time.Duration
}

// Run runs the suite.
func Run(t *testing.T, o Options) {
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	tests := []struct {
		name string
		fn   func(context.Context, *testing.T, Options, backends.Backend)
	}{
		{"create is idempotent and lookup finds it", createIdempotent},
		{"create refuses another resource's name", createDuplicate},
		{"limits apply and read back", limits},
		{"delete tolerates missing objects", deleteIdempotent},
		{"members add and remove idempotently", members},
		{"usage reports configured components", usageKeys},
		{"status pause and restore", status},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
			defer cancel()
			tc.fn(ctx, t, o, o.New(t))
		})
	}
}

func provisioner(t *testing.T, b backends.Backend) backends.Provisioner {
	p, ok := b.(backends.Provisioner)
	if !ok {
		t.Skip("backend does not provision")
	}
	return p
}

func create(ctx context.Context, t *testing.T, p backends.Provisioner, res backends.Resource, name string) backends.Resource {
	t.Helper()
	info, err := p.Create(ctx, backends.CreateRequest{Resource: res, Name: name})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if info.BackendID == "" {
		t.Fatalf("create %s returned an empty backend id", name)
	}
	res.BackendID = info.BackendID
	return res
}

func createIdempotent(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	p := provisioner(t, b)
	res := o.Resource(1)
	name := fmt.Sprintf("conf-%s", res.Slug)
	first := create(ctx, t, p, res, name)
	second := create(ctx, t, p, res, name)
	if first.BackendID != second.BackendID {
		t.Fatalf("second create made a new object: %s then %s", first.BackendID, second.BackendID)
	}
	if _, err := p.Lookup(ctx, first); err != nil {
		t.Fatalf("lookup after create: %v", err)
	}
	missing := first
	missing.BackendID = "does-not-exist-" + res.Slug
	if _, err := p.Lookup(ctx, missing); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("lookup of a missing object: want ErrNotFound, got %v", err)
	}
	cleanup(ctx, t, p, first)
}

func createDuplicate(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	p := provisioner(t, b)
	a, other := o.Resource(2), o.Resource(3)
	name := fmt.Sprintf("conf-%s", a.Slug)
	a = create(ctx, t, p, a, name)
	defer cleanup(ctx, t, p, a)
	other.Slug = a.Slug // another resource wanting the same name
	info, err := p.Create(ctx, backends.CreateRequest{Resource: other, Name: name})
	if !errors.Is(err, failure.ErrDuplicate) {
		if err == nil {
			other.BackendID = info.BackendID
			cleanup(ctx, t, p, other)
		}
		t.Fatalf("create of another resource with the same name: want ErrDuplicate, got %v (id %q)", err, info.BackendID)
	}
}

func limits(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	p := provisioner(t, b)
	res := create(ctx, t, p, o.Resource(4), "conf-limits")
	defer cleanup(ctx, t, p, res)
	want := backends.Quantities{}
	for k, v := range res.Limits {
		want[k] = v + 1
	}
	if err := p.SetLimits(ctx, res, want); err != nil {
		t.Fatalf("set limits: %v", err)
	}
	if err := p.SetLimits(ctx, res, want); err != nil {
		t.Fatalf("set limits again: %v", err)
	}
	lr, ok := b.(backends.LimitsReader)
	if !ok {
		return
	}
	got, err := lr.Limits(ctx, res)
	if err != nil {
		t.Fatalf("read limits: %v", err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("limit %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

func deleteIdempotent(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	p := provisioner(t, b)
	res := create(ctx, t, p, o.Resource(5), "conf-delete")
	for i := 0; i < 2; i++ {
		if err := p.Delete(ctx, res); err != nil {
			t.Fatalf("delete #%d: %v", i+1, err)
		}
	}
	if _, err := p.Lookup(ctx, res); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("lookup after delete: want ErrNotFound, got %v", err)
	}
}

func members(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	mm, ok := b.(backends.MembershipManager)
	if !ok || len(o.Members) < 2 {
		t.Skip("backend does not manage members (or no test users)")
	}
	p := provisioner(t, b)
	res := create(ctx, t, p, o.Resource(6), "conf-members")
	defer cleanup(ctx, t, p, res)
	add := []backends.Member{{Username: o.Members[0]}, {Username: o.Members[1]}}
	for i := 0; i < 2; i++ {
		if err := mm.AddMembers(ctx, res, add); err != nil {
			t.Fatalf("add members #%d: %v", i+1, err)
		}
	}
	expectMembers(ctx, t, mm, res, o.Members[:2])
	for i := 0; i < 2; i++ {
		if err := mm.RemoveMembers(ctx, res, []string{o.Members[0]}); err != nil {
			t.Fatalf("remove member #%d: %v", i+1, err)
		}
	}
	expectMembers(ctx, t, mm, res, o.Members[1:2])
}

func expectMembers(ctx context.Context, t *testing.T, mm backends.MembershipManager, res backends.Resource, want []string) {
	t.Helper()
	got, err := mm.Members(ctx, res)
	if err != nil {
		t.Fatalf("members: %v", err)
	}
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("members = %v, want %v", got, w)
	}
}

func usageKeys(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	ur, ok := b.(backends.UsageReporter)
	if !ok {
		t.Skip("backend does not report usage")
	}
	p := provisioner(t, b)
	res := create(ctx, t, p, o.Resource(7), "conf-usage")
	defer cleanup(ctx, t, p, res)
	got, err := ur.Usage(ctx, []backends.Resource{res}, backends.PeriodOf(time.Now()), true)
	if err != nil {
		t.Fatalf("usage: %v", err)
	}
	u, ok := got[res.BackendID]
	if !ok {
		return // no data yet is allowed
	}
	for k, v := range u.Total {
		if v < 0 {
			t.Errorf("negative usage %s=%v", k, v)
		}
	}
}

func status(ctx context.Context, t *testing.T, o Options, b backends.Backend) {
	sc, ok := b.(backends.StatusController)
	if !ok {
		t.Skip("backend has no paused/downscaled handling")
	}
	p := provisioner(t, b)
	res := create(ctx, t, p, o.Resource(8), "conf-status")
	defer cleanup(ctx, t, p, res)
	for _, step := range []func(context.Context, backends.Resource) error{sc.Pause, sc.Pause, sc.Downscale, sc.Restore, sc.Restore} {
		if err := step(ctx, res); err != nil {
			t.Fatalf("status change: %v", err)
		}
	}
}

func cleanup(ctx context.Context, t *testing.T, p backends.Provisioner, res backends.Resource) {
	t.Helper()
	if err := p.Delete(ctx, res); err != nil {
		t.Errorf("cleanup delete %s: %v", res.BackendID, err)
	}
}
