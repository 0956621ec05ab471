package keycloak

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

func TestFaultsAreRetriedAway(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{}, WithRetry(10, time.Millisecond, 2*time.Millisecond))
	e.sim.SetFaults(keycloaksim.Faults{Rate: 0.3, Seed: 42, Kinds: []keycloaksim.FaultKind{
		keycloaksim.Fault500, keycloaksim.Fault502, keycloaksim.Fault503, keycloaksim.Fault429, keycloaksim.FaultReset,
	}})
	users := make([]keycloaksim.User, 5)
	for i := range users {
		users[i] = e.sim.AddUser(fmt.Sprintf("member%d", i))
	}
	for p := range 4 {
		for c := range 3 {
			pname, cname := fmt.Sprintf("c_cluster%d", p), fmt.Sprintf("project_p%d_role", c)
			gid := must(e.client.EnsureGroup(ctx(t), pname, "cluster", cname, "project"))
			for _, u := range users {
				if _, found, err := e.client.FindUser(ctx(t), u.ID, true); err != nil || !found {
					t.Fatalf("FindUser(%s) = %v, %v", u.ID, found, err)
				}
				noErr(t, e.client.AddMember(ctx(t), u.ID, gid))
			}
			if got := must(e.client.Members(ctx(t), gid)); len(got) != len(users) {
				t.Fatalf("%s/%s has %d members", pname, cname, len(got))
			}
			noErr(t, e.client.RemoveMember(ctx(t), users[0].ID, gid))
			id, ok, err := e.client.FindChildGroup(ctx(t), pname, cname)
			if err != nil || !ok || id != gid {
				t.Fatalf("FindChildGroup = %q %v %v", id, ok, err)
			}
		}
	}
	for p := range 4 {
		pname := fmt.Sprintf("c_cluster%d", p)
		for c := range 3 {
			id, _, err := e.client.FindChildGroup(ctx(t), pname, fmt.Sprintf("project_p%d_role", c))
			noErr(t, err)
			noErr(t, e.client.DeleteGroup(ctx(t), id))
		}
		if !must(e.client.DeleteParentIfEmpty(ctx(t), pname)) {
			t.Fatalf("parent %s not deleted", pname)
		}
	}
	if left := e.sim.Groups(); len(left) != 0 {
		t.Fatalf("groups left: %v", left)
	}
	faults := e.sim.FaultLog()
	if len(faults) < 30 {
		t.Fatalf("only %d faults were injected", len(faults))
	}
	t.Logf("%d faults injected over %d requests; every operation succeeded", len(faults), e.sim.AdminCalls()+e.sim.Calls()[keycloaksim.RouteToken])
}

func TestErrorClassification(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{}, WithRetry(2, time.Millisecond, time.Millisecond))
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	tests := []struct {
		name          string
		fault         keycloaksim.FaultKind
		times         int
		wantTransient bool
		wantStatus    int
	}{
		{"503 until retries run out", keycloaksim.Fault503, 3, true, 503},
		{"429 until retries run out", keycloaksim.Fault429, 3, true, 429},
		{"500 until retries run out", keycloaksim.Fault500, 3, true, 500},
		{"resets until retries run out", keycloaksim.FaultReset, 3, true, 0},
		{"two 502s are retried away", keycloaksim.Fault502, 2, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.sim.FailNext(keycloaksim.RouteMembers, tt.times, tt.fault)
			_, err := e.client.Members(ctx(t), gid)
			if tt.wantStatus == 0 && !tt.wantTransient {
				noErr(t, err)
				return
			}
			if !failure.IsTransient(err) || (tt.wantStatus != 0 && !failure.HasStatus(err, tt.wantStatus)) {
				t.Fatalf("Members = %v, want transient status %d", err, tt.wantStatus)
			}
			if !strings.Contains(err.Error(), "list members of group "+gid) {
				t.Errorf("error %q does not name the operation and group", err)
			}
		})
	}
	t.Run("404 is permanent", func(t *testing.T) {
		_, err := e.client.Members(ctx(t), "no-such-group")
		if !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) {
			t.Fatalf("Members = %v", err)
		}
	})
	t.Run("network down is transient", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		c, _ := e.newClient(Config{URL: dead.URL})
		err := c.Ping(ctx(t))
		if !failure.IsTransient(err) {
			t.Fatalf("Ping = %v, want transient", err)
		}
	})
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			target++
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, Username: "admin", Password: secret.New(testPassword)}, nil, WithRetry(1, time.Millisecond, time.Millisecond))
	noErr(t, err)
	err = c.Ping(ctx(t))
	if err == nil || failure.IsTransient(err) || !strings.Contains(err.Error(), "unexpected redirect") {
		t.Fatalf("Ping = %v, want a permanent redirect error", err)
	}
	if target != 0 {
		t.Errorf("the redirect was followed %d times", target)
	}
}

func TestURLNormalisation(t *testing.T) {
	sim := keycloaksim.New(keycloaksim.Options{PathPrefix: "/auth", Admin: &keycloaksim.Admin{Username: "admin", Password: testPassword}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	for _, u := range []string{srv.URL + "/auth", srv.URL + "/auth/", srv.URL + "/auth//"} {
		t.Run(u, func(t *testing.T) {
			c, err := New(Config{URL: u, Username: "admin", Password: secret.New(testPassword)}, nil)
			noErr(t, err)
			if c.cfg.URL != srv.URL+"/auth/" {
				t.Errorf("URL normalised to %q", c.cfg.URL)
			}
			noErr(t, c.Ping(ctx(t)))
			must(c.EnsureGroup(ctx(t), parent, "", child, ""))
		})
	}
}

func TestConfigValidation(t *testing.T) {
	pw := secret.New(testPassword)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{URL: "https://kc.example", Username: "a", Password: pw}, ""},
		{"not a URL", Config{URL: "kc.example", Username: "a", Password: pw}, "not an http(s) URL"},
		{"query", Config{URL: "https://kc.example/?x=1", Username: "a", Password: pw}, "query"},
		{"no user", Config{URL: "https://kc.example/", Password: pw}, "username is empty"},
		{"no password", Config{URL: "https://kc.example/", Username: "a"}, "password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			noErr(t, err)
			want := Config{URL: "https://kc.example/", Realm: "waldur", UserRealm: "master", ClientID: "admin-cli", Username: "a", Password: pw, Timeout: 30 * time.Second}
			if c.cfg != want {
				t.Errorf("cfg = %+v", c.cfg)
			}
		})
	}
}
