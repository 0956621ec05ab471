package openstack_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// testComps maps Waldur components to quotas: cores (count), ram (Waldur GB → MB), storage
// (GB), floating IPs and networks.
var testComps = backends.Components{
	{Name: "cores", UnitFactor: 1, AccountingType: "limit"},
	{Name: "ram", UnitFactor: 1024, AccountingType: "limit"},
	{Name: "storage", UnitFactor: 1, AccountingType: "limit"},
	{Name: "floating_ip", UnitFactor: 1, AccountingType: "limit"},
	{Name: "net", UnitFactor: 1, AccountingType: "limit", Settings: map[string]any{"quota": "network"}},
}

// resource returns a resource with limits in backend units.
func resource(n int) backends.Resource {
	return backends.Resource{UUID: fmt.Sprintf("%032x", n), Name: fmt.Sprintf("Tenant %d", n), Slug: fmt.Sprintf("res-%d", n),
		ProjectSlug: "dark-matter", ProjectName: "Dark Matter", CustomerSlug: "physics", CustomerName: "Physics",
		Limits: backends.Quantities{"cores": 4, "ram": 8192, "storage": 50, "floating_ip": 2, "net": 3}}
}

// simEnv is a simulator served on loopback.
type simEnv struct {
	sim *openstacksim.Server
	url string
}

func startSim(t testing.TB, o openstacksim.Options) simEnv {
	t.Helper()
	if o.Users == nil {
		o.Users = []string{"alice", "bob", "carol"}
	}
	sim := openstacksim.New(o)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return simEnv{sim: sim, url: srv.URL}
}

func (e simEnv) settings(extra map[string]any) backends.Settings {
	o := e.sim.Options()
	s := backends.Settings{"auth_url": openstacksim.AuthURL(e.url), "username": o.AdminUser, "password": o.AdminPassword,
		"project_name": o.AdminProject, "region_name": o.Region, "external_network": o.ExternalNetwork, "tenant_prefix": "wd-"}
	maps.Copy(s, extra)
	return s
}

// counter counts requests passing the innermost transport, with their latency per operation.
type counter struct {
	base http.RoundTripper
	n    atomic.Int64
	mu   sync.Mutex
	ops  map[string]*opStat
}

type opStat struct {
	n     int
	total time.Duration
}

var idSegment = regexp.MustCompile(`/[0-9a-f]{32}|/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	start := time.Now()
	resp, err := c.base.RoundTrip(r)
	op := r.Method + " " + r.URL.Host + idSegment.ReplaceAllString(r.URL.Path, "/{id}")
	c.mu.Lock()
	if c.ops == nil {
		c.ops = map[string]*opStat{}
	}
	st := c.ops[op]
	if st == nil {
		st = &opStat{}
		c.ops[op] = st
	}
	st.n++
	st.total += time.Since(start)
	c.mu.Unlock()
	return resp, err
}

// reset zeroes the counters.
func (c *counter) reset() {
	c.mu.Lock()
	c.ops = nil
	c.mu.Unlock()
	c.n.Store(0)
}

// table formats the per-operation counts and mean latencies, slowest total first.
func (c *counter) table() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(c.ops), func(a, b string) int { return int(c.ops[b].total - c.ops[a].total) })
	var sb strings.Builder
	for _, k := range keys {
		st := c.ops[k]
		fmt.Fprintf(&sb, "%4d × %7.1f ms  %s\n", st.n, float64(st.total.Microseconds())/1000/float64(st.n), k)
	}
	return sb.String()
}

func newCounter() *counter { return &counter{base: http.DefaultTransport.(*http.Transport).Clone()} }

type backendOpts struct {
	settings  map[string]any
	comps     backends.Components
	secrets   backends.SecretStore
	transport http.RoundTripper
	log       *zap.Logger
}

func (e simEnv) backend(t testing.TB, o backendOpts) *openstack.Backend {
	t.Helper()
	return newBackend(t, e.settings(o.settings), o)
}

func newBackend(t testing.TB, s backends.Settings, o backendOpts) *openstack.Backend {
	t.Helper()
	if o.comps == nil {
		o.comps = testComps
	}
	if o.log == nil {
		o.log = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	}
	b, warnings, err := openstack.NewWithOptions(backends.Params{Offering: "test", Settings: s, Components: o.comps,
		Logger: o.log, Secrets: o.secrets}, openstack.Options{Transport: o.transport, RetryWaitMin: time.Millisecond,
		RetryWaitMax: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("new backend: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("unexpected warnings: %v", warnings)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// memSecrets is an in-memory backends.SecretStore.
type memSecrets struct {
	mu   sync.Mutex
	data map[string]map[string]string
}

func newMemSecrets() *memSecrets { return &memSecrets{data: map[string]map[string]string{}} }

func (m *memSecrets) Put(_ context.Context, path string, data map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[path] = maps.Clone(data)
	return nil
}

func (m *memSecrets) Get(_ context.Context, path string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.data[path]
	if !ok {
		return nil, fmt.Errorf("secret %s: %w", path, failure.ErrNotFound)
	}
	return maps.Clone(d), nil
}

func (m *memSecrets) Delete(_ context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, path)
	return nil
}

func (m *memSecrets) paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.data))
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func create(t testing.TB, b *openstack.Backend, res backends.Resource, name string) backends.Resource {
	t.Helper()
	info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: name})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	res.BackendID = info.BackendID
	return res
}
