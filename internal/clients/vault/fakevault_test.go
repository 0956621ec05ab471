package vault

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeVault answers the few Vault endpoints this package uses, the way Vault does (status codes,
// {"errors": [...]} bodies, KV v1/v2 layouts, token TTLs on an injected clock). The real-core
// tests in test/vault cover the same paths against Vault itself.
type fakeVault struct {
	mu       sync.Mutex
	now      func() time.Time
	roleID   string
	secretID string
	ttl      time.Duration // login token TTL
	maxTTL   time.Duration // from login; renewals are capped by it
	tokens   map[string][2]time.Time
	mounts   map[string]int            // mount path → KV version
	data     map[string]map[string]any // logical path (mount/rel) → data
	failures map[string]int            // request path → 500 answers still to give
	calls    map[string]int            // "METHOD /v1/path" → count
	issued   int
}

func newFakeVault(t *testing.T, now func() time.Time) (*fakeVault, string) {
	f := &fakeVault{now: now, roleID: "role-1", secretID: "sid-secret-0001", ttl: time.Minute, maxTTL: 3 * time.Minute,
		tokens: map[string][2]time.Time{"root-token-0001": {}}, mounts: map[string]int{"secret": 2, "kv1": 1},
		data: map[string]map[string]any{}, failures: map[string]int{}, calls: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeVault) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

func reply(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func fail(w http.ResponseWriter, code int, msg ...string) {
	reply(w, code, map[string]any{"errors": append([]string{}, msg...)})
}

func (f *fakeVault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/v1/")
	method := r.Method
	if method == http.MethodPost {
		method = http.MethodPut // the api client sends PUT; Vault treats both alike
	}
	f.calls[method+" /v1/"+path]++
	if n := f.failures[path]; n > 0 {
		f.failures[path] = n - 1
		fail(w, http.StatusInternalServerError, "internal error")
		return
	}
	if path == "auth/approle/login" {
		f.login(w, r)
		return
	}
	tok := r.Header.Get("X-Vault-Token")
	life, ok := f.tokens[tok]
	if !ok || (!life[0].IsZero() && !f.now().Before(life[0])) {
		fail(w, http.StatusForbidden, "1 error occurred:\n\t* permission denied\n\n") // Vault's multi-error text
		return
	}
	switch {
	case path == "auth/token/lookup-self":
		reply(w, 200, map[string]any{"data": map[string]any{"ttl": 0, "renewable": false}})
	case path == "auth/token/renew-self":
		f.renew(w, tok, life)
	case strings.HasPrefix(path, "sys/internal/ui/mounts/"):
		f.preflight(w, strings.TrimPrefix(path, "sys/internal/ui/mounts/"))
	default:
		f.kv(w, r, method, path)
	}
}

func (f *fakeVault) login(w http.ResponseWriter, r *http.Request) {
	var body map[string]string
	_ = json.NewDecoder(r.Body).Decode(&body)
	if body["role_id"] != f.roleID || body["secret_id"] != f.secretID {
		fail(w, http.StatusBadRequest, "invalid role or secret ID")
		return
	}
	f.issued++
	tok := fmt.Sprintf("hvs.issued-%04d", f.issued)
	f.tokens[tok] = [2]time.Time{f.now().Add(f.ttl), f.now().Add(f.maxTTL)}
	reply(w, 200, map[string]any{"auth": map[string]any{"client_token": tok, "lease_duration": int(f.ttl / time.Second), "renewable": true}})
}

func (f *fakeVault) renew(w http.ResponseWriter, tok string, life [2]time.Time) {
	if life[1].IsZero() {
		fail(w, http.StatusBadRequest, "lease is not renewable")
		return
	}
	exp := f.now().Add(f.ttl)
	if exp.After(life[1]) {
		exp = life[1]
	}
	f.tokens[tok] = [2]time.Time{exp, life[1]}
	reply(w, 200, map[string]any{"auth": map[string]any{"client_token": tok, "lease_duration": int(exp.Sub(f.now()) / time.Second), "renewable": true}})
}

func (f *fakeVault) preflight(w http.ResponseWriter, path string) {
	first, _, _ := strings.Cut(path, "/")
	v, ok := f.mounts[first]
	if !ok {
		fail(w, http.StatusForbidden, "preflight capability check returned 403")
		return
	}
	opts := map[string]any{}
	if v == 2 {
		opts["version"] = "2"
	}
	reply(w, 200, map[string]any{"data": map[string]any{"path": first + "/", "type": "kv", "options": opts}})
}

// kv serves reads, writes and deletes on both layouts; the stored key is mount/rel.
func (f *fakeVault) kv(w http.ResponseWriter, r *http.Request, method, path string) {
	mountPath, rest, _ := strings.Cut(path, "/")
	version, ok := f.mounts[mountPath]
	if !ok {
		fail(w, http.StatusNotFound, "no handler for route")
		return
	}
	if version == 2 {
		kind, rel, _ := strings.Cut(rest, "/")
		if (kind != "data" && kind != "metadata") || (kind == "metadata" && method != http.MethodDelete) {
			fail(w, http.StatusMethodNotAllowed)
			return
		}
		rest = rel
	}
	key := mountPath + "/" + rest
	switch method {
	case http.MethodGet:
		d, ok := f.data[key]
		switch {
		case !ok:
			fail(w, http.StatusNotFound)
		case version == 2:
			reply(w, 200, map[string]any{"data": map[string]any{"data": d, "metadata": map[string]any{"version": 1}}})
		default:
			reply(w, 200, map[string]any{"data": d})
		}
	case http.MethodPut:
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if version == 2 {
			body, _ = body["data"].(map[string]any)
		}
		f.data[key] = body
		w.WriteHeader(http.StatusNoContent)
	case http.MethodDelete:
		delete(f.data, key)
		w.WriteHeader(http.StatusNoContent)
	}
}
