package vault

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// headerLog records the Vault headers each request carried.
type headerLog struct {
	mu     sync.Mutex
	tokens []string
	spaces []string
	extra  []string
}

func (l *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.tokens = append(l.tokens, r.Header.Get("X-Vault-Token"))
		l.spaces = append(l.spaces, r.Header.Get("X-Vault-Namespace"))
		l.extra = append(l.extra, r.Header.Get("X-Planted"))
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *headerLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tokens)
}

// A Vault (or something in front of it) that answers 307 naming another host does not get the
// token sent there: the API client's own redirect following is off.
func TestRedirectsAreNotFollowed(t *testing.T) {
	f, _ := newFakeVault(t, time.Now)
	f.data["secret/site/rancher"] = map[string]any{"password": "rancher-pw-123"}
	elsewhere := &headerLog{}
	other := httptest.NewServer(elsewhere.wrap(f))
	t.Cleanup(other.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	r := newTestResolver(t, tokenSection(redirecting.URL), nil)
	got, err := r.Resolve(context.Background(), "vault:secret/site/rancher#password")
	if err == nil || got != "" {
		t.Fatalf("a redirect was followed: got %q, %v", got, err)
	}
	if n := elsewhere.count(); n != 0 {
		t.Fatalf("the redirect target received %d request(s) carrying tokens %q", n, elsewhere.tokens)
	}
}

// VAULT_* variables do not change whom the agent trusts or what it sends: VAULT_SKIP_VERIFY
// does not turn certificate checks off, VAULT_ADDR does not move the server, VAULT_NAMESPACE and
// VAULT_HEADERS add nothing to the requests. Only the vault section (tls_skip_verify, ca_cert,
// namespace) does.
func TestVaultEnvironmentIsIgnored(t *testing.T) {
	f, _ := newFakeVault(t, time.Now)
	f.data["secret/site/rancher"] = map[string]any{"password": "rancher-pw-123"}
	seen := &headerLog{}
	srv := httptest.NewTLSServer(seen.wrap(f)) // a certificate no system pool trusts
	t.Cleanup(srv.Close)
	t.Setenv("VAULT_SKIP_VERIFY", "true")
	t.Setenv("VAULT_ADDR", "https://vault.invalid:8200")
	t.Setenv("VAULT_NAMESPACE", "planted")
	t.Setenv("VAULT_HEADERS", `{"X-Planted": "yes"}`)
	t.Setenv("VAULT_TOKEN", "env-token-0001")

	r := newTestResolver(t, tokenSection(srv.URL), nil)
	_, err := r.Resolve(context.Background(), "vault:secret/site/rancher#password")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("VAULT_SKIP_VERIFY turned certificate checks off: %v", err)
	}
	if n := seen.count(); n != 0 {
		t.Fatalf("an untrusted server received %d request(s)", n)
	}

	skip := tokenSection(srv.URL)
	skip["tls_skip_verify"] = true // the configuration's explicit choice
	r = newTestResolver(t, skip, nil)
	got, err := r.Resolve(context.Background(), "vault:secret/site/rancher#password")
	if err != nil || got != "rancher-pw-123" {
		t.Fatalf("with tls_skip_verify in the configuration: %q, %v", got, err)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for i := range seen.tokens {
		if seen.spaces[i] != "" || seen.extra[i] != "" || seen.tokens[i] == "env-token-0001" {
			t.Fatalf("request %d carried namespace %q, X-Planted %q, token %q from the environment",
				i, seen.spaces[i], seen.extra[i], seen.tokens[i])
		}
	}
}
