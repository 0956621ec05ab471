package openstack_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// crashAfter forwards requests and, the first time one matches, kills the service after it
// answered and reports a reset instead of the answer: the service applied the request and
// died before the client learnt the outcome.
type crashAfter struct {
	base  http.RoundTripper
	match func(*http.Request) bool
	crash func()
	done  atomic.Bool
}

func (c *crashAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || !c.match(req) || !c.done.CompareAndSwap(false, true) {
		return resp, err
	}
	resp.Body.Close()
	c.crash()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// killNeutron kills neutron-server's whole process group (a crash, not a clean stop).
func killNeutron(t *testing.T) {
	t.Helper()
	pidFile := filepath.Join(osenv.StateDir(), "run", "neutron.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("neutron pidfile: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("neutron pidfile %s holds %q", pidFile, b)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill neutron process group %d: %v", pid, err)
	}
	t.Logf("killed neutron-server (process group %d)", pid)
}

// upScript runs scripts/openstack/up.sh, which restarts whatever is not running.
func upScript(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "../../../scripts/openstack/up.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("up.sh: %v\n%s", err, out)
	}
	return time.Since(start)
}

// Neutron crashes right after creating the router; the pass fails, up.sh restarts Neutron,
// the next pass finishes the tenant and nothing is duplicated.
func TestRealNeutronCrashMidCreate(t *testing.T) {
	r := loadReal(t)
	if os.Geteuid() != 0 {
		if os.Getenv(osenv.RequireRealEnvVar) == "1" {
			t.Fatal("restarting Neutron needs root (scripts/openstack/up.sh)")
		}
		t.Skip("restarting Neutron needs root (scripts/openstack/up.sh)")
	}
	crash := &crashAfter{base: http.DefaultTransport.(*http.Transport).Clone(), crash: func() { killNeutron(t) },
		match: func(req *http.Request) bool {
			return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v2.0/routers")
		}}
	restarted := false
	t.Cleanup(func() {
		if crash.done.Load() && !restarted {
			upScript(t) // leave the services running for the tests that follow
		}
	})
	b := r.backend(t, backendOpts{transport: crash})
	res := realResource(r.run)(1)
	_, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "crash"})
	if !crash.done.Load() {
		t.Fatalf("the create never reached the router (err %v)", err)
	}
	if !failure.IsTransient(err) {
		t.Fatalf("the interrupted pass must fail as transient, got %v", err)
	}
	t.Logf("interrupted pass: %v", err)
	took := upScript(t)
	restarted = true
	t.Logf("up.sh restarted Neutron in %s", took.Round(time.Millisecond))
	start := time.Now()
	info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "crash"})
	if err != nil {
		t.Fatalf("the pass after the restart: %v", err)
	}
	t.Logf("next pass finished the tenant in %s", time.Since(start).Round(time.Millisecond))
	res.BackendID = info.BackendID
	defer func() {
		if err := b.Delete(context.Background(), res); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	if got := r.objects(t, res.BackendID); got != finishedTenant {
		t.Fatalf("tenant objects after the restart: %+v, want %+v (nothing duplicated)", got, finishedTenant)
	}
}
