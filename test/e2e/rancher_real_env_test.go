package e2e

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/rancherenv"
)

// realEnv is the rancher backend's world against the real Rancher v2.12.0 that
// scripts/rancher/up.sh runs on loopback (cluster `local`): the Waldur and Keycloak
// simulators as in rancherEnv, and an administrator's client of Rancher to seed and inspect.
// The server lives across test runs, so every run has its own project prefix and sweeps the
// projects earlier runs left.
type realEnv struct {
	*rancherEnv
	rancher *rancherenv.Env
	admin   *rancherenv.Admin
}

// realPrefixes are the project names real-Rancher runs use ("rt" + 6 hex digits + "-").
var realPrefixes = regexp.MustCompile(`^rt[0-9a-f]{6}-`)

func newRealRancherEnv(t *testing.T) *realEnv {
	t.Helper()
	r := rancherenv.Load(t)
	e := &realEnv{rancher: r, admin: r.Admin()}
	e.sweep(t, realPrefixes.MatchString) // what an interrupted earlier run left
	e.rancherEnv = startWorld(t, waldursim.Options{}, nil)
	key := e.admin.APIKey(t, "site-agent e2e")
	e.rsURL, e.cs = r.URL, r.Kube(t)
	e.ra = rancherAccess{access: key.Access, secret: key.Secret, cluster: "local", prefix: "rt" + rancherenv.Suffix() + "-"}
	e.writeRancherConfig(true)
	t.Cleanup(func() {
		e.sweep(t, func(name string) bool { return strings.HasPrefix(name, e.ra.prefix) })
		if !t.Failed() {
			e.sim.AssertNoViolations(t)
		}
	})
	return e
}

// realProject is a v3 project as the tests read it.
type realProject struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
	Labels      map[string]string `json:"labels"`
}

// realBinding is a v3 projectRoleTemplateBinding as the tests read it.
type realBinding struct {
	ID               string `json:"id"`
	ProjectID        string `json:"projectId"`
	RoleTemplateID   string `json:"roleTemplateId"`
	GroupPrincipalID string `json:"groupPrincipalId"`
	UserID           string `json:"userId"`
	Removed          string `json:"removed"` // deletionTimestamp: being deleted
}

// sweep deletes the projects of cluster local whose names match, and their namespaces (those
// the agent made through the proxy outlive their project in v2.12).
func (e *realEnv) sweep(t *testing.T, match func(string) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ps []realProject
	if err := e.admin.List(ctx, "/v3/projects?clusterId=local", &ps); err != nil {
		t.Errorf("sweep: %v", err)
		return
	}
	cs := e.rancher.Kube(t)
	for _, p := range ps {
		if !match(p.Name) {
			continue
		}
		if err := e.admin.Do(ctx, http.MethodDelete, "/v3/projects/"+url.PathEscape(p.ID), nil, nil); err != nil {
			t.Logf("sweep: delete project %s: %v", p.ID, err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, p.Name, metav1.DeleteOptions{}); err == nil {
			t.Logf("sweep: namespace %s deleted", p.Name)
		}
	}
}

// projects are this run's projects by name.
func (e *realEnv) projects() map[string]realProject {
	e.t.Helper()
	var ps []realProject
	if err := e.admin.List(e.ctx(), "/v3/projects?clusterId=local", &ps); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]realProject{}
	for _, p := range ps {
		if strings.HasPrefix(p.Name, e.ra.prefix) {
			out[strings.TrimPrefix(p.Name, e.ra.prefix)] = p
		}
	}
	return out
}

// bindings lists a project's PRTBs (those being deleted included).
func (e *realEnv) bindings(projectID string) []realBinding {
	e.t.Helper()
	var bs []realBinding
	if err := e.admin.List(e.ctx(), "/v3/projectroletemplatebindings?projectId="+url.QueryEscape(projectID), &bs); err != nil {
		e.t.Fatal(err)
	}
	return bs
}

// groupBindings are the live (not being deleted) keycloakoidc_group bindings of a project, as
// "principal=role".
func (e *realEnv) groupBindings(projectID string) []string {
	var out []string
	for _, b := range e.bindings(projectID) {
		if b.Removed == "" && strings.HasPrefix(b.GroupPrincipalID, "keycloakoidc_group://") {
			out = append(out, b.GroupPrincipalID+"="+b.RoleTemplateID)
		}
	}
	slices.Sort(out)
	return out
}

// bind makes a PRTB as the administrator (a stale binding, or the incumbent's).
func (e *realEnv) bind(projectID, principal, role string) realBinding {
	e.t.Helper()
	var b realBinding
	if err := e.admin.Do(e.ctx(), http.MethodPost, "/v3/projectroletemplatebindings", map[string]any{"type": "projectRoleTemplateBinding",
		"projectId": projectID, "roleTemplateId": role, "groupPrincipalId": principal}, &b); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// waitRoleBinding waits for Rancher's RBAC controllers to grant the group in the namespace: a
// RoleBinding with the group principal as subject (the PRTB made real in Kubernetes).
func (e *realEnv) waitRoleBinding(ns, principal string) {
	e.t.Helper()
	waitFor(e.t, 2*time.Minute, "a RoleBinding of "+principal+" in "+ns, func() bool {
		l, err := e.cs.RbacV1().RoleBindings(ns).List(e.ctx(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		return slices.ContainsFunc(l.Items, func(rb rbacv1.RoleBinding) bool {
			return slices.ContainsFunc(rb.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "Group" && s.Name == principal })
		})
	})
}

// namespaceGone waits until a namespace no longer exists (the namespace controller has
// deleted its contents).
func (e *realEnv) namespaceGone(ns string) {
	e.t.Helper()
	waitFor(e.t, 3*time.Minute, "namespace "+ns+" gone", func() bool {
		_, err := e.cs.CoreV1().Namespaces().Get(e.ctx(), ns, metav1.GetOptions{})
		return err != nil && strings.Contains(err.Error(), "not found")
	})
}
