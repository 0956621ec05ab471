package keycloak

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

func TestTokenIsCachedAndRenewedBeforeExpiry(t *testing.T) {
	clock := newClock()
	e := newEnv(t, keycloaksim.Options{TokenTTL: 60 * time.Second, RefreshTTL: 10 * time.Minute, Now: clock.Now}, WithClock(clock.Now))
	steps := []struct {
		advance time.Duration
		want    map[string]int // cumulative grants
	}{
		{0, map[string]int{"password": 1}},
		{30 * time.Second, map[string]int{"password": 1}},                     // still fresh
		{20 * time.Second, map[string]int{"password": 1, "refresh_token": 1}}, // 50s: within the 15s renewal window
		{11 * time.Minute, map[string]int{"password": 2, "refresh_token": 1}}, // refresh token expired: log in again
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		for range 3 {
			noErr(t, e.client.Ping(ctx(t)))
		}
		if diff := cmp.Diff(s.want, e.sim.TokenGrants()); diff != "" {
			t.Fatalf("step %d: grants (-want +got):\n%s", i, diff)
		}
	}
}

func TestShortLivedTokenOnTheRealClock(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{TokenTTL: time.Second})
	noErr(t, e.client.Ping(ctx(t)))
	time.Sleep(900 * time.Millisecond) // past 750ms: three quarters of the lifetime
	noErr(t, e.client.Ping(ctx(t)))
	if got := e.sim.TokenGrants(); got["password"] != 1 || got["refresh_token"] != 1 {
		t.Fatalf("grants = %v, want one login and one refresh", got)
	}
}

func TestUnauthorizedFetchesANewTokenOnce(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	noErr(t, e.client.Ping(ctx(t)))
	e.sim.ExpireTokens()
	noErr(t, e.client.Ping(ctx(t)))
	if got := e.sim.TokenFetches(); got != 2 {
		t.Fatalf("token fetches = %d, want 2", got)
	}
	if got := e.sim.Calls()[keycloaksim.RouteRealm]; got != 3 {
		t.Fatalf("realm reads = %d, want 3 (one rejected)", got)
	}
}

func TestRevokedSessionFallsBackToPasswordGrant(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	noErr(t, e.client.Ping(ctx(t)))
	e.sim.RevokeSessions()
	noErr(t, e.client.Ping(ctx(t)))
	// 401 on the cached token, the refresh grant is refused, a new password grant succeeds.
	if got := e.sim.Calls()[keycloaksim.RouteToken]; got != 3 {
		t.Errorf("token requests = %d, want 3 (login, refused refresh, login)", got)
	}
	if diff := cmp.Diff(map[string]int{"password": 2}, e.sim.TokenGrants()); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
	text := logText(e.logs)
	if !strings.Contains(text, "keycloak token refresh failed") {
		t.Errorf("the refused refresh was not logged:\n%s", text)
	}
	if strings.Contains(text, "eyJ") || strings.Contains(text, testPassword) {
		t.Errorf("a token or the password was logged:\n%s", text)
	}
}

func TestConcurrentCallersShareOneTokenFetch(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- e.client.Ping(ctx(t))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		noErr(t, err)
	}
	if got := e.sim.TokenFetches(); got != 1 {
		t.Fatalf("token fetches = %d, want 1", got)
	}
}

func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantText string
	}{
		{"wrong password", Config{Password: secret.New("wrong-password-value")}, "Invalid user credentials"},
		{"unknown client", Config{ClientID: "not-admin-cli"}, "invalid_client"},
		{"admin realm missing", Config{UserRealm: "nosuch"}, "Realm does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, keycloaksim.Options{})
			c, logs := e.newClient(tt.cfg)
			err := c.Ping(ctx(t))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) || failure.IsTransient(err) {
				t.Fatalf("Ping = %v, want a permanent error mentioning %q", err, tt.wantText)
			}
			for _, leak := range []string{testPassword, "wrong-password-value"} {
				if strings.Contains(err.Error(), leak) || strings.Contains(logText(logs), leak) {
					t.Errorf("the password leaked into the error or logs: %v", err)
				}
			}
		})
	}
}

func TestCheckRights(t *testing.T) {
	tests := []struct {
		name        string
		roles       []string
		wantRights  bool
		wantEnsure  bool
		wantMessage string
	}{
		{"manage-users", []string{keycloaksim.RoleManageUsers}, true, true, ""},
		{"realm-admin", []string{keycloaksim.RoleRealmAdmin}, true, true, ""},
		{"query-groups lists but cannot write", []string{keycloaksim.RoleQueryGroups}, false, false, "holds only query-groups of waldur-realm"},
		{"view-users reads but cannot write", []string{keycloaksim.RoleViewUsers}, false, false, "manage-users (or realm-admin)"},
		{"no roles", []string{}, false, false, "manage-users (or realm-admin)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, keycloaksim.Options{Admin: &keycloaksim.Admin{Username: "admin", Password: testPassword, Roles: tt.roles}})
			detail, err := e.client.CheckRights(ctx(t))
			if (err == nil) != tt.wantRights || (err == nil && !strings.Contains(detail, "may create groups and manage members")) {
				t.Fatalf("CheckRights = %v", err)
			}
			if err != nil {
				msg, public := failure.PublicMessage(err)
				if !public || !strings.Contains(msg, tt.wantMessage) || !strings.Contains(msg, `"admin"`) {
					t.Errorf("CheckRights message %q does not name the role and the user", msg)
				}
			}
			_, err = e.client.EnsureGroup(ctx(t), parent, "", child, "")
			if (err == nil) != tt.wantEnsure {
				t.Fatalf("EnsureGroup = %v", err)
			}
			if err != nil && (!failure.HasStatus(err, 403) || failure.IsTransient(err) || !strings.Contains(err.Error(), "manage-users")) {
				t.Errorf("EnsureGroup error %v: want a permanent 403 naming manage-users", err)
			}
		})
	}
}
