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

// echoing answers 400 to the requests hit selects, with the request's Authorization header and
// body in the error body (as some gateways and debug builds do); others pass to next.
func echoing(next http.Handler, hit func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hit(r) {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
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
		return echoing(h, func(r *http.Request) bool { return r.Method != http.MethodGet })
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
		return echoing(h, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/auth/tokens") })
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
