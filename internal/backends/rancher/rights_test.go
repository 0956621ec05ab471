package rancher

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
)

// Issue 16: Rancher lists only the projects the key's user may read, and every cluster has a
// System project. A key that does not see it (a cluster member, not its owner) cannot tell a
// free project name from another's: the "managed projects" line fails and says so. (Against the
// real Rancher with restricted keys: test/e2e/rancher_real_diag_test.go.)
func TestManagedProjectsNeedsEveryProjectInView(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	front := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/projects" {
			f.rs.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		f.rs.ServeHTTP(rec, r)
		var page map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Error(err)
		}
		var seen []any
		for _, p := range page["data"].([]any) {
			if p.(map[string]any)["labels"].(map[string]any)[systemProjectLabel] == nil {
				seen = append(seen, p)
			}
		}
		page["data"] = seen
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	}))
	t.Cleanup(front.Close)
	for _, tc := range []struct {
		url string
		ok  bool
	}{{f.settings["backend_url"].(string), true}, {front.URL, false}} {
		f.settings["backend_url"] = tc.url
		var line backends.Check
		for _, c := range backendtest.Checks(ctxT(t), f.backend(nil).(backends.Diagnoser)) {
			if c.Name == "managed projects" {
				line = c
			}
		}
		if line.OK != tc.ok || (!tc.ok && !strings.Contains(line.Detail, "not the cluster's System project")) {
			t.Errorf("%s: %+v", tc.url, line)
		}
	}
}
