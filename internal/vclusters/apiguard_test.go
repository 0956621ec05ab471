package vclusters

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/secret"
)

// guarded sends one request to a stopped manager's API (no Rancher, no main API server: the
// guard answers before any handler that needs them) and returns the status code.
func guarded(t *testing.T, cfg Config, method, host, contentType, auth, path, body string) int {
	t.Helper()
	m, err := NewManager(cfg, unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = host
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	return rec.Code
}

// A web page the operator visits can neither reach the API by DNS rebinding (its own host
// name resolving to 127.0.0.1) nor make the browser POST a cluster (a form or a no-cors fetch
// can only send text/plain, form or multipart bodies).
func TestAPIRefusesOtherHostsAndNonJSONWrites(t *testing.T) {
	cfg := testConfig(t, "https://127.0.0.1:1", "token-a:b")
	cfg.Listen = "127.0.0.1:9090"
	const create = `{"name":"vc-1"}`
	for _, tc := range []struct {
		name, method, host, contentType, path string
		want                                  int
	}{
		{"rebinding host reads", "GET", "evil.example:9090", "", "/clusters", http.StatusMisdirectedRequest},
		{"rebinding host writes", "POST", "evil.example:9090", "application/json", "/clusters", http.StatusMisdirectedRequest},
		{"rebinding host, no port", "GET", "evil.example", "", "/healthz", http.StatusMisdirectedRequest},
		{"another loopback-looking name", "GET", "127.0.0.1.evil.example:9090", "", "/clusters", http.StatusMisdirectedRequest},
		{"form post", "POST", "127.0.0.1:9090", "application/x-www-form-urlencoded", "/clusters", http.StatusUnsupportedMediaType},
		{"text/plain post", "POST", "127.0.0.1:9090", "text/plain", "/clusters", http.StatusUnsupportedMediaType},
		{"multipart post", "POST", "localhost:9090", "multipart/form-data; boundary=x", "/clusters/vc-1/scale", http.StatusUnsupportedMediaType},
		{"post without a type", "POST", "127.0.0.1:9090", "", "/clusters/vc-1/chaos", http.StatusUnsupportedMediaType},
		{"json post", "POST", "127.0.0.1:9090", "application/json", "/clusters", http.StatusServiceUnavailable},
		{"json post with charset, localhost", "POST", "localhost:9090", "application/json; charset=utf-8", "/clusters", http.StatusServiceUnavailable},
		{"json post, [::1]", "POST", "[::1]:9090", "Application/JSON", "/clusters", http.StatusServiceUnavailable},
		{"read", "GET", "127.0.0.1:9090", "", "/clusters", http.StatusOK},
		{"delete needs no body", "DELETE", "LOCALHOST:9090", "", "/clusters/none", http.StatusNotFound},
	} {
		if got := guarded(t, cfg, tc.method, tc.host, tc.contentType, "", tc.path, create); got != tc.want {
			t.Errorf("%s: %s %s Host %s: %d, want %d", tc.name, tc.method, tc.path, tc.host, got, tc.want)
		}
	}
}

// With api_token set every request needs it, /healthz and /metrics included; without it none
// does.
func TestAPIBearerToken(t *testing.T) {
	cfg := testConfig(t, "https://127.0.0.1:1", "token-a:b")
	cfg.Listen = "localhost:9090"
	for _, path := range []string{"/clusters", "/healthz", "/metrics"} {
		if got := guarded(t, cfg, "GET", "localhost:9090", "", "", path, ""); got != http.StatusOK {
			t.Errorf("no token configured: GET %s: %d", path, got)
		}
	}
	cfg.APIToken = secret.New("0123456789abcdef-api")
	for _, tc := range []struct {
		name, method, auth, path string
		want                     int
	}{
		{"none", "GET", "", "/clusters", http.StatusUnauthorized},
		{"none, health", "GET", "", "/healthz", http.StatusUnauthorized},
		{"none, metrics", "GET", "", "/metrics", http.StatusUnauthorized},
		{"wrong", "GET", "Bearer 0123456789abcdef-apX", "/clusters", http.StatusUnauthorized},
		{"a prefix of it", "GET", "Bearer 0123456789abcdef", "/clusters", http.StatusUnauthorized},
		{"basic", "GET", "Basic MDEyMzQ1Njc4OWFiY2RlZi1hcGk6", "/clusters", http.StatusUnauthorized},
		{"right", "GET", "Bearer 0123456789abcdef-api", "/clusters", http.StatusOK},
		{"right, scheme in another case", "GET", "bearer 0123456789abcdef-api", "/healthz", http.StatusOK},
		{"right, a write", "POST", "Bearer 0123456789abcdef-api", "/clusters", http.StatusServiceUnavailable},
		{"wrong, a write", "POST", "Bearer nope", "/clusters", http.StatusUnauthorized},
	} {
		if got := guarded(t, cfg, tc.method, "localhost:9090", "application/json", tc.auth, tc.path, `{"name":"vc-1"}`); got != tc.want {
			t.Errorf("%s: %s %s: %d, want %d", tc.name, tc.method, tc.path, got, tc.want)
		}
	}
}

// api_token is a secret of some length, set in the file or SITE_AGENT_VC_API_TOKEN.
func TestAPITokenConfiguration(t *testing.T) {
	file := writeFile(t, "c.yaml", "kwok: {mode: \"off\"}\nmain_api: {kubeconfig: "+writeFile(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")+"}\n")
	base := []string{"SITE_AGENT_VC_RANCHER_URL=https://rancher.example", "SITE_AGENT_VC_RANCHER_TOKEN=token-a:b"}
	cfg, err := LoadConfig(file, append(base, "SITE_AGENT_VC_API_TOKEN=0123456789abcdef-api"), nil)
	if err != nil || cfg.APIToken.Reveal() != "0123456789abcdef-api" {
		t.Fatalf("token from the environment: %v %q", err, cfg.APIToken)
	}
	if s := fmt.Sprintf("%v %+v", cfg, cfg); strings.Contains(s, "0123456789abcdef-api") {
		t.Error("the API token prints")
	}
	_, err = LoadConfig(file, append(base, "SITE_AGENT_VC_API_TOKEN=short"), nil)
	if ce, ok := err.(*ConfigError); !ok || ce.Key != "api_token" {
		t.Errorf("a short token: %v", err)
	}
}
