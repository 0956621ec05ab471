package rancher

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// elsewhere serves the simulator as if it were reached at host (its links, built from the
// request's Host, then name host), over http:// when plain, below prefix; it pages listings
// that ask for everything (limit=-1), as a server may.
func elsewhere(sim http.Handler, host string, plain bool, prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		if host != "" {
			r.Host = host
		}
		if plain {
			r.TLS = nil
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		r.URL.RawPath = ""
		if q := r.URL.Query(); q.Get("limit") == "-1" {
			q.Set("limit", "2")
			r.URL.RawQuery = q.Encode()
		}
		sim.ServeHTTP(w, r)
	})
}

// collector is another host (host:port) that counts every request reaching it.
func collector(t *testing.T, tls bool) (string, *atomic.Int64) {
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		t.Errorf("a request reached another host: %s %s (Authorization set: %v)", r.Method, r.URL.Path, r.Header.Get("Authorization") != "")
		http.Error(w, "not here", http.StatusTeapot)
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), &n
}

// A Rancher that writes its links (pagination.next, manifestUrl, every self link) with another
// host, with http://, or both, still works, and no request leaves the configured scheme, host
// and port: the API key never reaches the other host, nor goes out in clear text.
func TestLinksStayOnTheConfiguredURL(t *testing.T) {
	for _, tc := range []struct {
		name         string
		other, plain bool
		prefix       string
	}{
		{name: "another https host", other: true},
		{name: "another host over http", other: true, plain: true},
		{name: "the same host over http", plain: true},
		{name: "another host, configured below a path prefix", other: true, prefix: "/rancher"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, ranchersim.Options{NamespaceDelay: -1})
			host, got := "", &atomic.Int64{}
			if tc.other {
				host, got = collector(t, !tc.plain)
			}
			front := httptest.NewTLSServer(elsewhere(w.sim, host, tc.plain, tc.prefix))
			t.Cleanup(front.Close)
			w.srv = front
			c := w.client(t, front.URL+tc.prefix, fast(2))
			ctx := ctxT(t)
			for i := range 5 {
				if _, err := w.sim.AddProject(cluster, fmt.Sprintf("p%d", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			ps, err := c.Projects(ctx, cluster, "")
			if err != nil || len(ps) != 7 { // and the cluster's Default and System projects
				t.Fatalf("projects over pages: %d %v", len(ps), err)
			}
			if n := w.sim.Calls()["projects.list"]; n != 4 {
				t.Fatalf("%d pages read, want 4", n)
			}
			imp, err := c.EnsureCluster(ctx, "imported", "")
			if err != nil {
				t.Fatal(err)
			}
			reg, err := c.Registration(ctx, imp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.other && !strings.Contains(reg.ManifestURL.Reveal(), host) {
				t.Fatalf("the manifest URL %q does not name the other host", reg.ManifestURL.Reveal())
			}
			if data, err := c.Manifest(ctx, reg.ManifestURL); err != nil || !strings.Contains(string(data), "cattle-credentials") {
				t.Fatalf("manifest: %v", err)
			}
			for _, r := range w.rec.sent() {
				if !strings.HasPrefix(r[strings.Index(r, " ")+1:], front.URL+tc.prefix+"/v3/") {
					t.Errorf("request %s is not on %s", r, front.URL+tc.prefix)
				}
			}
			if got.Load() != 0 {
				t.Fatalf("%d requests reached the other host", got.Load())
			}
		})
	}
}

// A link that cannot be pinned — not http(s), credentials in it, or leading somewhere else than
// the next page of the same collection — is refused with a permanent error naming it (without
// its query), and never fetched.
func TestLinksThatAreRefused(t *testing.T) {
	for _, next := range []string{
		"ftp://rancher.example/v3/projects?marker=m2",
		"https://user:pw@rancher.example/v3/projects?marker=m2",
		"https://rancher.example/v3/tokens?marker=m2",
		"/v3/projects/../tokens?marker=m2",
		"javascript:alert(1)",
		"https://rancher.example/v3/projects/x?marker=m2",
	} {
		t.Run(next, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > 1 {
					t.Errorf("a refused link was fetched: %s", r.URL)
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"type":"collection","data":[{"id":"c-1:p-1","name":"a"}],"pagination":{"next":%q}}`, next)
			}))
			t.Cleanup(srv.Close)
			rec := &recorder{next: srv.Client().Transport}
			c, err := New(Config{URL: srv.URL, Token: secret.New("token-x:refused-secret"), Transport: rec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Projects(ctxT(t), "c-1", "")
			var fe *failure.Error
			if !errors.As(err, &fe) || failure.IsTransient(err) {
				t.Fatalf("want a permanent, public error, got %v", err)
			}
			shown, _, _ := strings.Cut(next, "?")
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", shown)) || strings.Contains(err.Error(), "marker") ||
				strings.Contains(err.Error(), "refused-secret") {
				t.Fatalf("error %q should name %q, without the query or the key", err, shown)
			}
			if n := len(rec.sent()); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

// pin keeps the path of a link and puts it on the configured URL.
func TestPin(t *testing.T) {
	any := func(string) bool { return true }
	for _, tc := range []struct{ base, link, want string }{
		{"https://r.example", "https://r.example/v3/projects?marker=m2", "/v3/projects?marker=m2"},
		{"https://r.example", "http://r.example:80/v3/projects?marker=m2", "/v3/projects?marker=m2"},
		{"https://r.example:8443", "https://public.example/v3/projects", "/v3/projects?"},
		{"https://r.example", "//evil.example/v3/projects?a=1", "/v3/projects?a=1"},
		{"https://r.example", "/v3/projects?a=1", "/v3/projects?a=1"},
		{"https://gw.example/rancher", "https://public.example/v3/projects?a=1", "/v3/projects?a=1"},
		{"https://gw.example/rancher", "https://gw.example/rancher/v3/projects?a=1", "/v3/projects?a=1"},
		{"https://r.example", "https://r.example/v3/import/t0k_c-1.yaml", "/v3/import/t0k_c-1.yaml?"},
		{"https://r.example", "https://r.example/v3/a%2Fb", "/v3/a%2Fb?"},
	} {
		c, err := New(Config{URL: tc.base}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, q, err := c.pin(tc.link, any, false)
		if got := p + "?" + q; err != nil || strings.TrimSuffix(got, "?") != strings.TrimSuffix(tc.want, "?") {
			t.Errorf("pin(%s on %s) = %q %v, want %q", tc.link, tc.base, got, err, tc.want)
		}
		target, _ := url.Parse(c.URL() + p)
		if target.Host != c.base.Host || target.Scheme != c.base.Scheme {
			t.Errorf("pin(%s on %s) leads to %s", tc.link, tc.base, target)
		}
	}
}
