package keycloak

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

const testPassword = "s3cret-admin-password"

// env is a simulator on loopback and a client logged in as its admin.
type env struct {
	t      testing.TB
	sim    *keycloaksim.Server
	srv    *httptest.Server
	client *Client
	logs   *observer.ObservedLogs
}

// newEnv starts a simulator (admin "admin" / testPassword with manage-users) and a client with
// fast retries.
func newEnv(t testing.TB, simOpts keycloaksim.Options, opts ...Option) *env {
	t.Helper()
	if simOpts.Admin == nil {
		simOpts.Admin = &keycloaksim.Admin{Username: "admin", Password: testPassword}
	}
	sim := keycloaksim.New(simOpts)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	e := &env{t: t, sim: sim, srv: srv}
	e.client, e.logs = e.newClient(Config{}, opts...)
	return e
}

// newClient builds another client for the same simulator; zero Config fields get test values.
func (e *env) newClient(cfg Config, opts ...Option) (*Client, *observer.ObservedLogs) {
	e.t.Helper()
	if cfg.URL == "" {
		cfg.URL = e.srv.URL + "/"
	}
	if cfg.Username == "" {
		cfg.Username = "admin"
	}
	if cfg.Password.IsZero() {
		cfg.Password = secret.New(testPassword)
	}
	core, logs := observer.New(zap.DebugLevel)
	all := append([]Option{WithRetry(6, time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := New(cfg, zap.New(core), all...)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c, logs
}

// admin counts the admin API requests the body of fn sends (the token endpoint excluded).
func (e *env) admin(fn func()) int {
	e.t.Helper()
	before := e.sim.AdminCalls()
	fn()
	return e.sim.AdminCalls() - before
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// must returns v or panics with err; the test runner reports the panic as the failure.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeClock is a settable clock shared by the simulator and the client.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// logText is every logged message and field, for leak checks.
func logText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteString("\n")
	}
	return b.String()
}
