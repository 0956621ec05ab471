package vclusters

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	corev1 "k8s.io/api/core/v1"
)

// testConfig is a valid configuration for a Rancher simulator at url (main API server left to
// the caller's Deps), with fast loops.
func testConfig(t *testing.T, rancherURL string, token string) Config {
	t.Helper()
	cfg := Defaults()
	cfg.StateDir = t.TempDir()
	cfg.Rancher.URL, cfg.Rancher.Token, cfg.Rancher.Insecure = rancherURL, secret.New(token), true
	cfg.Proxy.PortBase = 0
	cfg.Tunnel.BackoffMin, cfg.Tunnel.BackoffMax = 50_000_000, 500_000_000
	cfg.Sync.TokenWait = 3_000_000_000
	if err := cfg.Template.validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// rancherSim serves a Rancher simulator over TLS.
func rancherSim(t *testing.T) (*ranchersim.Server, *httptest.Server) {
	t.Helper()
	sim := ranchersim.New(ranchersim.Options{ConnectedCheckInterval: time.Second, CleanupRetryInterval: 200 * time.Millisecond})
	srv := httptest.NewTLSServer(sim)
	t.Cleanup(func() { srv.Close(); sim.CloseTunnels() })
	return sim, srv
}

// runManager runs m until the test ends.
func runManager(t *testing.T, m *Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitFor(t, "the manager to run", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.ctx != nil
	})
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

type apiAnswer struct {
	code int
	body map[string]any
	raw  string
}

func call(t *testing.T, h http.Handler, method, path, body string) apiAnswer {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:9090" // the default listen address (guard checks it)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	h.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return apiAnswer{rec.Code, out, string(raw)}
}

// namespaceNames are the names of the listed namespaces.
func namespaceNames(list corev1.NamespaceList) []string {
	names := make([]string, len(list.Items))
	for i, ns := range list.Items {
		names[i] = ns.Name
	}
	return names
}

// isTenantNamespace: the name is one of the tool's tenant namespaces (TenantNamespace).
func isTenantNamespace(name string) bool { return strings.HasPrefix(name, TenantNamespace("")) }
