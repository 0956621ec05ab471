package e2e

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv/rancherenv"
)

// Item 5 of issue 16: `site-agent diagnostics` of a rancher offering against the real Rancher
// v2.12.0, every line true. The administrator's key passes every line; keys of users made in
// Rancher with less fail exactly the lines whose rights they lack, each with a line saying why
// (Keycloak is the simulator and passes throughout).
func TestRealRancherDiagnostics(t *testing.T) {
	e := newRealRancherEnv(t)
	admin := e.admin
	lines := e.diagnose(t, 0)
	for name, l := range lines {
		if !strings.HasPrefix(l, "ok") {
			t.Errorf("admin key: %s: %s", name, l)
		}
	}
	for _, want := range []string{"rancher api", "rancher token", "rancher cluster", "managed projects", "kubernetes proxy", "kubernetes rights"} {
		if _, ok := lines[want]; !ok {
			t.Errorf("no %q line: %v", want, lines)
		}
	}
	// A cluster role that may read namespaces and nothing else: the proxy answers, the rights do not.
	var rt struct {
		ID string `json:"id"`
	}
	err := admin.Do(t.Context(), http.MethodPost, "/v3/roletemplates", map[string]any{"type": "roleTemplate", "name": "sa-ns-view-" + rancherenv.Suffix(),
		"context": "cluster", "rules": []map[string]any{{"apiGroups": []string{""}, "resources": []string{"namespaces"}, "verbs": []string{"get", "list", "watch"}}}}, &rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Do(t.Context(), http.MethodDelete, "/v3/roletemplates/"+rt.ID, nil, nil) })
	const (
		cluster    = "/v3/clusters/local"
		namespaces = "/k8s/clusters/local/api/v1/namespaces"
	)
	for _, tc := range []struct {
		name  string
		roles map[string]string // cluster role on local
		ready []string          // what the key may read once Rancher's RBAC controllers granted the role
		fail  map[string]string // line → what its detail says
	}{
		{"standard user", nil, nil, map[string]string{"rancher cluster": `403`, "managed projects": "not the cluster's System project",
			"kubernetes proxy": `cannot list resource "namespaces"`}},
		{"cluster member", map[string]string{"local": "cluster-member"}, []string{cluster}, map[string]string{"managed projects": "not the cluster's System project",
			"kubernetes proxy": `cannot list resource "namespaces"`}},
		{"namespace reader", map[string]string{"local": rt.ID}, []string{cluster, namespaces}, map[string]string{"managed projects": "not the cluster's System project",
			"kubernetes rights": "may not, cluster-wide: create namespaces, update namespaces, delete namespaces, list resourcequotas"}},
		{"cluster owner", map[string]string{"local": "cluster-owner"}, []string{cluster, namespaces}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := admin.RestrictedKey(t, "sa-diag", []string{"user"}, tc.roles)
			for _, path := range tc.ready { // the role's bindings come a moment after its create
				waitFor(t, time.Minute, "the key may read "+path, func() bool {
					return admin.DoAs(t.Context(), key, http.MethodGet, path, nil, nil) == nil
				})
			}
			e.ra.access, e.ra.secret = key.Access, key.Secret
			e.writeRancherConfig(true)
			code := 1
			if len(tc.fail) == 0 {
				code = 0
			}
			lines := e.diagnose(t, code)
			for name, l := range lines {
				want, bad := tc.fail[name]
				switch {
				case bad && (!strings.HasPrefix(l, "FAIL") || !strings.Contains(l, want)):
					t.Errorf("%s: want a failure saying %q, got %s", name, want, l)
				case !bad && !strings.HasPrefix(l, "ok"):
					t.Errorf("%s: %s", name, l)
				}
			}
			for name := range tc.fail {
				if _, ok := lines[name]; !ok {
					t.Errorf("no %s line: %v", name, lines)
				}
			}
		})
	}
}

// diagLine is one check of the diagnostics report, "[ok  ] <offering> · <upstream> · <name>:
// <detail>" or "[FAIL] …" (cli's report), of the rancher and kubernetes upstreams.
var diagLine = regexp.MustCompile(`^\[(ok|FAIL)\s*\] .+? · (?:rancher|kubernetes) · ([a-z0-9 ]+?): (.*)$`)

// diagnose runs `site-agent diagnostics` once, wants the exit code, and returns the rancher
// offering's Rancher and Kubernetes lines by name ("ok …" or "FAIL …"). No secret may show.
func (e *realEnv) diagnose(t *testing.T, code int) map[string]string {
	t.Helper()
	r := e.run("diagnostics", "-c", e.config)
	if r.code != code {
		t.Fatalf("diagnostics: want exit %d: %s", code, r)
	}
	if strings.Contains(r.stdout+r.stderr, e.ra.secret) {
		t.Fatal("diagnostics print the secret key")
	}
	out := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		m := diagLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		out[m[2]] = m[1] + " " + m[3]
	}
	if len(out) == 0 {
		t.Fatalf("no rancher lines in:\n%s", r.stdout)
	}
	return out
}
