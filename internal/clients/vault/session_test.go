package vault

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// clock is a settable time source shared by the fake server and the session.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func tokenSection(addr string) map[string]any {
	return map[string]any{"address": addr, "max_retries": 2, "auth": map[string]any{"method": "token", "token": "root-token-0001"}}
}

func appRoleSection(addr, secretID string) map[string]any {
	return map[string]any{"address": addr, "max_retries": 0,
		"auth": map[string]any{"method": "approle", "role_id": "role-1", "secret_id": secretID}}
}

// fastRetries shortens the backoff between retries so tests do not wait for it.
func fastRetries(s *session) {
	s.client.SetMinRetryWait(5 * time.Millisecond)
	s.client.SetMaxRetryWait(20 * time.Millisecond)
}

func newTestResolver(t *testing.T, section map[string]any, clk *clock) *Resolver {
	t.Helper()
	r, err := newResolver(section, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if clk != nil {
		r.s.now = clk.now
	}
	fastRetries(r.s)
	return r
}

func TestResolveReadsEachMountAndSecretOnce(t *testing.T) {
	f, addr := newFakeVault(t, time.Now)
	f.data["secret/site/rancher"] = map[string]any{"password": "rancher-pw-123", "port": 8443, "tls": true}
	f.data["kv1/waldur"] = map[string]any{"token": "waldur-token-456"}
	f.data["secret/site/keycloak"] = map[string]any{"password": "kc-pw-789"}
	r := newTestResolver(t, tokenSection(addr), nil)
	want := map[string]string{
		"vault:secret/site/rancher#password":  "rancher-pw-123",
		"vault:secret/site/rancher#port":      "8443",
		"vault:secret/site/rancher#tls":       "true",
		"vault:kv1/waldur#token":              "waldur-token-456",
		"vault:secret/site/keycloak#password": "kc-pw-789",
	}
	for ref, v := range want {
		got, err := r.Resolve(context.Background(), ref)
		if err != nil || got != v {
			t.Fatalf("%s: got %q, %v; want %q", ref, got, err, v)
		}
	}
	preflights := f.count("GET /v1/sys/internal/ui/mounts/secret/site/rancher") + f.count("GET /v1/sys/internal/ui/mounts/secret/site/keycloak")
	if preflights != 1 {
		t.Errorf("mount secret/ looked up %d times, want once", preflights)
	}
	for key, n := range map[string]int{
		"GET /v1/sys/internal/ui/mounts/kv1/waldur": 1, "GET /v1/secret/data/site/rancher": 1, "GET /v1/kv1/waldur": 1,
	} {
		if got := f.count(key); got != n {
			t.Errorf("%s: %d calls, want %d", key, got, n)
		}
	}
}

func TestResolveErrorsSayWhyAndRevealNothing(t *testing.T) {
	f, addr := newFakeVault(t, time.Now)
	f.data["secret/site/rancher"] = map[string]any{"password": "rancher-pw-123", "nested": map[string]any{"a": "b"}}
	cases := []struct {
		ref, want string
		notFound  bool
	}{
		{"vault:secret/site/rancher#user", `key "user" missing in secret secret/site/rancher (its keys: nested, password)`, false},
		{"vault:secret/site/rancher#nested", `key "nested" in secret secret/site/rancher holds an object, not a string`, false},
		{"vault:secret/site/absent#x", "secret secret/site/absent not found (KV v2 mount secret/)", true},
		{"vault:other/site/x#k", "looking up the mount of other/site/x: permission denied", false},
		{"vault:secret#k", "invalid reference: secret path", false},
	}
	r := newTestResolver(t, tokenSection(addr), nil)
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			_, err := r.Resolve(context.Background(), c.ref)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if errors.Is(err, failure.ErrNotFound) != c.notFound || failure.IsTransient(err) {
				t.Fatalf("classification: not found %v, transient %v", errors.Is(err, failure.ErrNotFound), failure.IsTransient(err))
			}
			for _, s := range []string{"rancher-pw-123", "root-token-0001"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error reveals %q: %v", s, err)
				}
			}
		})
	}
}

func TestPermissionDeniedOnRead(t *testing.T) {
	_, addr := newFakeVault(t, time.Now)
	section := tokenSection(addr)
	r := newTestResolver(t, section, nil)
	r.s.mounts.add(mount{path: "secret", version: 2}) // as if looked up with a valid token before
	r.s.cfg.Auth.Token = secret.New("hvs.not-a-valid-token")
	_, err := r.Resolve(context.Background(), "vault:secret/site/x#k")
	want := "reading secret/site/x (KV v2 mount secret/): permission denied (HTTP 403; the token's policies do not allow this path, or the token expired or was revoked)"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if !failure.HasStatus(err, 403) || failure.IsTransient(err) {
		t.Fatalf("want a permanent 403 in the chain: %#v", err)
	}
}

func TestServerErrorsAreRetriedThenTransient(t *testing.T) {
	cases := []struct {
		name      string
		failures  int
		wantErr   bool
		wantCalls int
	}{
		{"recovers within retries", 2, false, 3},
		{"gives up after max_retries", 5, true, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, addr := newFakeVault(t, time.Now)
			f.data["secret/flaky"] = map[string]any{"k": "value-0001"}
			f.failures["secret/data/flaky"] = c.failures
			_, err := newTestResolver(t, tokenSection(addr), nil).Resolve(context.Background(), "vault:secret/flaky#k")
			if (err != nil) != c.wantErr || f.count("GET /v1/secret/data/flaky") != c.wantCalls {
				t.Fatalf("err %v after %d calls", err, f.count("GET /v1/secret/data/flaky"))
			}
			if c.wantErr && (!failure.IsTransient(err) || !strings.Contains(err.Error(), "reading secret/flaky (KV v2 mount secret/): HTTP 500: internal error")) {
				t.Fatalf("want a transient, described error, got %v", err)
			}
		})
	}
}

func TestLoginErrors(t *testing.T) {
	_, addr := newFakeVault(t, time.Now)
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	cases := []struct {
		name, addr, secretID, want string
		transient                  bool
	}{
		{"wrong secret id", addr, "sid-wrong-0002", "vault login (approle at auth/approle): HTTP 400: invalid role or secret ID", false},
		{"unreachable", closed, "sid-secret-0001", "vault login (approle at auth/approle): dial tcp", true},
		{"auth mount missing", addr, "sid-secret-0001", "vault login (approle at auth/elsewhere): permission denied", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			section := appRoleSection(c.addr, c.secretID)
			if c.name == "auth mount missing" {
				section["auth"].(map[string]any)["mount"] = "elsewhere"
			}
			_, err := newTestResolver(t, section, nil).Resolve(context.Background(), "vault:secret/x#k")
			if err == nil || !strings.Contains(err.Error(), c.want) || failure.IsTransient(err) != c.transient {
				t.Fatalf("got %v (transient %v), want %q", err, failure.IsTransient(err), c.want)
			}
			if strings.Contains(err.Error(), c.secretID) {
				t.Fatalf("error reveals the secret id: %v", err)
			}
			st, err := NewStore(section)
			if err != nil {
				t.Fatal(err)
			}
			fastRetries(st.s)
			if err := st.Delete(context.Background(), "secret/x"); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("a login failure must not pass for a missing secret on delete: %v", err)
			}
		})
	}
}

func TestTokenIsRenewedThenReplaced(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	f, addr := newFakeVault(t, clk.now)
	f.data["secret/x"] = map[string]any{"k": "value-0001"}
	st, err := NewStore(appRoleSection(addr, "sid-secret-0001"))
	if err != nil {
		t.Fatal(err)
	}
	st.s.now = clk.now
	fastRetries(st.s)
	scrubbed := secret.Registered()
	get := func(step string) {
		t.Helper()
		if _, err := st.Get(context.Background(), "secret/x"); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	steps := []struct {
		name           string
		advance        time.Duration
		logins, renews int
	}{
		{"first use logs in", 0, 1, 0},
		{"young token used as is", 30 * time.Second, 1, 0},
		{"renewed after two thirds of its TTL", 15 * time.Second, 1, 1},
		{"renewed again", 45 * time.Second, 1, 2},
		{"renewed up to its max TTL", 40 * time.Second, 1, 3},
		{"renewal capped by max TTL: new login", 35 * time.Second, 2, 4},
		{"expired while idle: renewal refused, new login", 5 * time.Minute, 3, 5},
	}
	for _, s := range steps {
		clk.advance(s.advance)
		get(s.name)
		if l, r := f.count("PUT /v1/auth/approle/login"), f.count("PUT /v1/auth/token/renew-self"); l != s.logins || r != s.renews {
			t.Fatalf("%s: %d logins, %d renewals; want %d, %d", s.name, l, r, s.logins, s.renews)
		}
	}
	f.mu.Lock()
	f.tokens = map[string][2]time.Time{} // every token revoked
	f.mu.Unlock()
	get("revoked token: 403, new login, retried")
	if l := f.count("PUT /v1/auth/approle/login"); l != 4 {
		t.Fatalf("%d logins after revocation, want 4", l)
	}
	if n := secret.Registered() - scrubbed; n != 1 {
		t.Errorf("after 4 logins the scrubber holds %d more values, want 1 (the current token; replaced ones leave)", n)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	for _, path := range []string{"secret/tenants/t1", "kv1/tenants/t1"} {
		t.Run(path, func(t *testing.T) {
			f, addr := newFakeVault(t, time.Now)
			st, err := NewStore(tokenSection(addr))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := st.Get(ctx, path); !errors.Is(err, failure.ErrNotFound) {
				t.Fatalf("absent: %v", err)
			}
			want := map[string]string{"username": "t1-admin", "password": "p4ss-w0rd-t1"}
			if err := st.Put(ctx, path, want); err != nil {
				t.Fatal(err)
			}
			got, err := st.Get(ctx, path)
			if err != nil || got["username"] != "t1-admin" || got["password"] != "p4ss-w0rd-t1" || len(got) != 2 {
				t.Fatalf("get: %v, %v", got, err)
			}
			if err := st.Delete(ctx, path); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, path); err != nil {
				t.Fatalf("deleting an absent secret: %v", err)
			}
			if _, err := st.Get(ctx, path); !errors.Is(err, failure.ErrNotFound) || len(f.data) != 0 {
				t.Fatalf("after delete: %v, data %v", err, f.data)
			}
			if err := st.Put(ctx, "secret", want); err == nil || !strings.Contains(err.Error(), "must be <mount>/<path>") {
				t.Fatalf("bad path: %v", err)
			}
		})
	}
}
