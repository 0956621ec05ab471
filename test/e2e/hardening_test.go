package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// echoing answers 400 to the requests hit selects (it sees the body), with the request's
// Authorization header and body in the error body (as some gateways and debug builds do);
// others pass to next.
func echoing(next http.Handler, hit func(r *http.Request, body []byte) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !hit(r, body) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","status":"400","message":"bad request: Authorization: %s; body: %s"}`,
			r.Header.Get("Authorization"), bytes.ReplaceAll(body, []byte(`"`), []byte(`'`)))
	})
}

// assertNoCredential fails when any of the credentials appears in the output.
func assertNoCredential(t *testing.T, where, out string, creds ...string) {
	t.Helper()
	for _, c := range creds {
		if strings.Contains(out, c) {
			t.Errorf("%s carries the credential %q:\n%s", where, c, tail(out))
		}
	}
}

// Rancher (or a gateway in front of it) answers a write 400 with the request's Authorization
// header in the body: neither the agent's log nor the error stored on the order in Waldur
// carries the secret key.
func TestRancherEchoedAuthorizationStaysOut(t *testing.T) {
	e := startRancherSims(t, nil, waldursim.Options{}, func(name string, h http.Handler) http.Handler {
		if name != "rancher" {
			return h
		}
		return echoing(h, func(r *http.Request, _ []byte) bool { return r.Method != http.MethodGet })
	})
	e.writeRancherConfig(false)
	order := e.world.CreateOrder("echo", map[string]float64{"cpu": 1, "ram": 1, "storage": 1})
	r := e.run("-m", "order_process", "-c", e.config, "--once")
	got, _ := e.sim.Order(order.UUID)
	if got.State != waldursim.OrderErred || !strings.Contains(got.ErrorMessage, "HTTP 400") {
		t.Fatalf("order %s (%q), want erred by the 400: %s", got.State, got.ErrorMessage, r)
	}
	out := r.stdout + r.stderr
	if !strings.Contains(out, "HTTP 400") {
		t.Fatalf("the log does not show the upstream error: %s", r)
	}
	assertNoCredential(t, "the log", out, "sim-secret")
	assertNoCredential(t, "the order's error in Waldur", got.ErrorMessage, "sim-secret")
}

// Keystone answers the login 400 echoing the request body, password included: the
// order_process log does not carry the password.
func TestKeystoneEchoedPasswordStaysOut(t *testing.T) {
	w := newOSSimWorldWrapped(t, func(h http.Handler) http.Handler {
		return echoing(h, func(r *http.Request, _ []byte) bool { return strings.HasSuffix(r.URL.Path, "/auth/tokens") })
	})
	w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: w.offering.UUID, ProjectUUID: w.project.UUID,
		PlanUUID: w.offering.Plans[0].UUID, Limits: map[string]float64{"cores": 1, "storage": 1024}, Attributes: map[string]any{"name": "echo"}})
	r := w.run("-m", "order_process", "-c", w.config, "--once")
	out := r.stdout + r.stderr
	if !strings.Contains(out, "400") {
		t.Fatalf("the log does not show Keystone's error: %s", r)
	}
	pw := w.os.Options().AdminPassword
	assertNoCredential(t, "the log", out, pw)
}

// The closing check, as an operator would run it: the built binary against a Rancher
// that echoes credentials in its error answers and customers whose orders overflow every limit.
// No credential reaches the output or Waldur, and no order becomes a quota that means something
// else — the overflowing ones are refused with a reason before anything is written.
func TestHostileUpstreamsAndOverflowingOrders(t *testing.T) {
	t.Run("rancher", hostileRancher)
	t.Run("openstack", overflowingOpenStack)
}

// hostileRancher: Rancher echoes the Authorization header on the echo order's project write;
// five orders overflow a quantity.
func hostileRancher(t *testing.T) {
	e := startRancherSims(t, nil, waldursim.Options{}, func(name string, h http.Handler) http.Handler {
		if name != "rancher" {
			return h
		}
		return echoing(h, func(r *http.Request, body []byte) bool {
			return r.Method == http.MethodPost && bytes.Contains(body, []byte("echo"))
		})
	})
	e.writeRancherConfig(false)
	echo := e.world.CreateOrder("echo", map[string]float64{"cpu": 1, "ram": 1, "storage": 1})
	overflow := map[string]map[string]float64{
		"ram wraps to 0":       {"cpu": 1, "ram": 17179869184, "storage": 1},
		"ram turns negative":   {"cpu": 1, "ram": 9e9, "storage": 1},
		"cpu turns negative":   {"cpu": 1e16, "ram": 1, "storage": 1},
		"negative storage":     {"cpu": 1, "ram": 1, "storage": -5},
		"storage beyond int64": {"cpu": 1, "ram": 1, "storage": 1e300},
	}
	orders := map[string]string{}
	for name, limits := range overflow {
		orders[name] = e.world.CreateOrder(strings.ReplaceAll(name, " ", "-"), limits).UUID
	}
	r := e.run("-m", "order_process", "-c", e.config, "--once")
	out := r.stdout + r.stderr
	assertNoCredential(t, "the log", out, "sim-secret")
	got, _ := e.sim.Order(echo.UUID)
	if got.State != waldursim.OrderErred || !strings.Contains(got.ErrorMessage, "HTTP 400") {
		t.Fatalf("the echoed order: %s %q: %s", got.State, got.ErrorMessage, r)
	}
	for name, uuid := range orders {
		o, _ := e.sim.Order(uuid)
		why := o.ErrorMessage + o.ProviderRejectionComment
		if (o.State != waldursim.OrderRejected && o.State != waldursim.OrderErred) || !strings.Contains(why, "limit ") {
			t.Errorf("%s: order %s %q, want refused with a reason naming the limit", name, o.State, why)
		}
	}
	for _, o := range e.sim.Orders() {
		assertNoCredential(t, "an order's error in Waldur", o.ErrorMessage+o.ProviderRejectionComment, "sim-secret")
	}
	if n := e.rs.Calls()["project.create"]; n != 0 || len(projectNames(e.rs)) != 0 {
		t.Fatalf("Rancher got %d project creates (%v): an overflowing order was written", n, projectNames(e.rs))
	}
}

// overflowingOpenStack: limits no OpenStack quota holds make no project.
func overflowingOpenStack(t *testing.T) {
	w := newOSSimWorld(t)
	bad := map[string]map[string]float64{
		"negative cores":   {"cores": -1, "storage": 1024},
		"cores past int32": {"cores": 3e9, "storage": 1024},
	}
	orders := map[string]string{}
	for name, limits := range bad {
		orders[name] = w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: w.offering.UUID, ProjectUUID: w.project.UUID,
			PlanUUID: w.offering.Plans[0].UUID, Limits: limits, Attributes: map[string]any{"name": strings.ReplaceAll(name, " ", "-")}}).UUID
	}
	before := w.os.ProjectCount()
	r := w.run("-m", "order_process", "-c", w.config, "--once")
	assertNoCredential(t, "the log", r.stdout+r.stderr, w.os.Options().AdminPassword)
	for name, uuid := range orders {
		o, _ := w.sim.Order(uuid)
		why := o.ErrorMessage + o.ProviderRejectionComment
		if (o.State != waldursim.OrderRejected && o.State != waldursim.OrderErred) || !strings.Contains(why, "cores") {
			t.Errorf("%s: order %s %q, want refused with a reason naming the limit: %s", name, o.State, why, r)
		}
	}
	if n := w.os.ProjectCount(); n != before {
		t.Fatalf("%d projects made for orders that were refused", n-before)
	}
}
