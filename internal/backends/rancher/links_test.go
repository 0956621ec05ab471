package rancher

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
)

// The API key goes nowhere but backend_url (issue 19): a Rancher whose answers name another host
// — in X-API-Schemas, schema and resource links, pagination.next — over https or in clear
// text, still serves pings and diagnostics, and no request reaches that host.
func TestTheKeyStaysOnBackendURL(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("links over http=%v", plain), func(t *testing.T) {
			var leaked atomic.Int64
			other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				leaked.Add(1)
				t.Errorf("%s %s reached the other host (Authorization set: %v)", r.Method, r.URL.Path, r.Header.Get("Authorization") != "")
				http.Error(w, "no", http.StatusTeapot)
			}))
			if plain {
				other.Start()
			} else {
				other.StartTLS()
			}
			t.Cleanup(other.Close)
			f := newFixture(t, fixtureOpts{})
			host := strings.TrimPrefix(strings.TrimPrefix(other.URL, "https://"), "http://")
			front := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r = r.Clone(r.Context())
				r.Host = host // the simulator writes every link with the request's host
				if plain {
					r.TLS = nil
				}
				if q := r.URL.Query(); q.Get("limit") == "-1" { // and pages, whatever it was asked
					q.Set("limit", "2")
					r.URL.RawQuery = q.Encode()
				}
				f.rs.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			f.settings["backend_url"] = front.URL
			for i := range 5 {
				if _, err := f.rs.AddProject(f.cluster, fmt.Sprintf("%sp%d", f.prefix, i), map[string]string{annManaged: "true"}); err != nil {
					t.Fatal(err)
				}
			}
			b := f.backend(nil)
			if err := b.(backends.Pinger).Ping(ctxT(t)); err != nil {
				t.Errorf("ping: %v", err)
			}
			lines := map[string]backends.Check{}
			for _, c := range backendtest.Checks(ctxT(t), b.(backends.Diagnoser)) {
				lines[c.Name] = c
			}
			if c := lines["managed projects"]; !c.OK || !strings.Contains(c.Detail, "5 of 7 projects") { // and Default, System
				t.Errorf("managed projects: %+v", c)
			}
			if c, ok := lines["kubernetes proxy"]; !ok || c.OK { // no Kubernetes behind this simulator
				t.Errorf("kubernetes proxy: %+v", c)
			}
			for _, name := range []string{"rancher api", "rancher token", "rancher cluster"} {
				if !lines[name].OK {
					t.Errorf("%s: %+v", name, lines[name])
				}
			}
			if n := leaked.Load(); n > 0 {
				t.Fatalf("%d requests went to %s", n, other.URL)
			}
		})
	}
}
