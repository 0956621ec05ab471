package rancherkccrd

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

const (
	realA = "aaaaaaaa00000000000000000000000a"
	realB = "bbbbbbbb00000000000000000000000b"
)

var realRes = backends.Resource{UUID: "cccc0000000000000000000000000001", Slug: "adamas", BackendID: "c-m-adamas01"}

func realRequest() backends.ProjectSync {
	return backends.ProjectSync{Resource: realRes, Projects: []backends.ResourceProject{
		{UUID: realA, Name: "Genomics", Limits: map[string]any{"cpu": float64(4000), "memory": "8Gi"},
			Grants: []backends.Grant{{Role: "project_member", Username: "ann"}, {Role: "project_admin", Username: "bob"}}},
		{UUID: realB, Name: "Physics", Grants: []backends.Grant{{Role: "project_member", Username: "cid"}}},
	}}
}

// The backend against a real kube-apiserver with the CRD installed, the operator played by the
// test: custom resources written and repaired, status read back (Pending → Ready; Error with
// failing conditions; synced members as strings and as objects), orphans pruned by label only.
func TestSyncAgainstAKubeAPIServer(t *testing.T) {
	c := newCluster(t)
	b := c.backend(nil)
	if err := b.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := realRequest()
	rep := sync1(t, b, req)
	if got := c.names(); !slices.Equal(got, []string{"adamas-aaaaaaaa", "adamas-bbbbbbbb"}) {
		t.Fatalf("custom resources %v", got)
	}
	a := c.get("adamas-aaaaaaaa")
	if q, _, _ := unstructured.NestedMap(a.Object, "spec", "resourceQuotas"); q["cpu"] != int64(4000) || q["memory"] != "8Gi" ||
		a.GetLabels()[labelResource] != realRes.UUID || a.GetLabels()[labelProject] != realA {
		t.Fatalf("written %v", a.Object)
	}
	if rep.Projects[0].Phase != backends.ProjectInProgress || statesOf(rep)["ann/project_member"] != backends.GrantPending {
		t.Fatalf("before the operator: %+v", rep)
	}
	c.operator("adamas-aaaaaaaa", map[string]any{"phase": "Pending"})
	c.operator("adamas-bbbbbbbb", map[string]any{"phase": "Creating"})
	if rep = sync1(t, b, req); statesOf(rep)["ann/project_member"] != backends.GrantPending {
		t.Fatalf("pending: %+v", rep)
	}
	c.operator("adamas-aaaaaaaa", map[string]any{"phase": "Ready", "rancherProjectId": "c-m-adamas01:p-1",
		"keycloakRoleBindings": []any{map[string]any{"groupName": "g", "memberCount": 1, "syncedMembers": []any{"ann"}}}})
	c.operator("adamas-bbbbbbbb", map[string]any{"phase": "Error", "conditions": []any{
		map[string]any{"type": "RancherProjectReady", "status": "True"},
		map[string]any{"type": "KeycloakGroupsReady", "status": false, "message": "Keycloak unreachable"}}})
	genA, writes := c.get("adamas-aaaaaaaa").GetGeneration(), b.kube.writes.Load()
	rep = sync1(t, b, req)
	if d := cmp.Diff(map[string]string{"ann/project_member": "synced", "bob/project_admin": "missing_in_idp", "cid/project_member": "error"},
		statesOf(rep)); d != "" {
		t.Fatalf("states (-want +got):\n%s", d)
	}
	if rep.Projects[0].Phase != backends.ProjectReady || rep.Projects[1].Phase != backends.ProjectFailed || rep.Projects[1].Message != "Keycloak unreachable" {
		t.Fatalf("outcomes %+v", rep.Projects)
	}
	if got := c.get("adamas-aaaaaaaa").GetGeneration(); got != genA || b.kube.writes.Load() != writes {
		t.Fatalf("an unchanged spec (completed by the CRD's defaults) was written again: generation %d → %d, %d writes",
			genA, got, b.kube.writes.Load()-writes)
	}
	fresh := c.backend(nil)
	if sync1(t, fresh, req); fresh.kube.writes.Load() != 0 {
		t.Fatalf("a new process rewrote unchanged custom resources %d times", fresh.kube.writes.Load())
	}
	entries := rep.Metadata["managed_rancher_projects"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["rancher_project_id"] != "c-m-adamas01:p-1" || rep.Metadata["namespace"] != c.ns {
		t.Fatalf("metadata %v", rep.Metadata)
	}
	c.repairAndPrune(t, b, req)
}

// repairAndPrune: objects syncedMembers, a spec change that keeps the operator's finalizer and
// annotation and removes quotas, a CR deleted by hand, and orphans.
func (c *cluster) repairAndPrune(t *testing.T, b *Backend, req backends.ProjectSync) {
	c.patch("adamas-aaaaaaaa", map[string]any{"metadata": map[string]any{"finalizers": []any{"kopf.zalando.org/KopfFinalizerMarker"},
		"annotations": map[string]any{"kopf.zalando.org/last-handled-configuration": "{}"}}})
	c.operator("adamas-aaaaaaaa", map[string]any{"phase": "Ready",
		"keycloakRoleBindings": []any{map[string]any{"syncedMembers": []any{map[string]any{"userIdentifier": "bob"}}}}})
	req.Projects[0].Limits = nil
	req.Projects[0].Grants = req.Projects[0].Grants[1:] // ann's role revoked
	rep := sync1(t, b, req)
	a := c.get("adamas-aaaaaaaa")
	if _, has, _ := unstructured.NestedMap(a.Object, "spec", "resourceQuotas"); has || len(a.GetFinalizers()) != 1 ||
		a.GetAnnotations()["kopf.zalando.org/last-handled-configuration"] != "{}" {
		t.Fatalf("after the change %v", a.Object)
	}
	if st := statesOf(rep); st["bob/project_admin"] != backends.GrantPending { // the status is for the old spec
		t.Fatalf("a stale status must count as pending: %v", st)
	}
	c.operator("adamas-aaaaaaaa", map[string]any{"phase": "Ready"}) // observes the new generation
	if st := statesOf(sync1(t, b, req)); st["bob/project_admin"] != backends.GrantSynced {
		t.Fatalf("objects as synced members: %v", st)
	}
	c.patch("adamas-aaaaaaaa", map[string]any{"metadata": map[string]any{"finalizers": nil}})
	c.deleteByHand("adamas-bbbbbbbb")
	c.create("hand-made", nil)
	c.create("other-resource", map[string]string{labelResource: "dddd0000000000000000000000000001"})
	c.create("adamas-stale", map[string]string{labelResource: realRes.UUID})
	sync1(t, b, req)
	if got := c.names(); !slices.Equal(got, []string{"adamas-aaaaaaaa", "adamas-bbbbbbbb", "hand-made", "other-resource"}) {
		t.Fatalf("after repair and prune: %v", got)
	}
	req.Projects = req.Projects[:1]
	sync1(t, b, req)
	if got := c.names(); !slices.Equal(got, []string{"adamas-aaaaaaaa", "hand-made", "other-resource"}) {
		t.Fatalf("a removed resource project's CR must go, and only it: %v", got)
	}
}

// Two writers: the operator writes status between the agent's read and its replace, so the
// replace answers 409; the agent reads again and replaces with the fresh resourceVersion, and
// gives up (a temporary failure) when that happens five times in a row.
func TestReplaceRetriesOn409(t *testing.T) {
	c := newCluster(t)
	b := c.backend(nil)
	req := realRequest()
	sync1(t, b, req)
	races := 0
	b.kube = c.racingClient(t, &races, 2)
	req.Projects[0].Name = "Genomics II"
	sync1(t, b, req)
	if got, _, _ := unstructured.NestedString(c.get("adamas-aaaaaaaa").Object, "spec", "projectName"); got != "Genomics II" ||
		b.kube.conflicts.Load() != 2 {
		t.Fatalf("projectName %q after %d conflicts", got, b.kube.conflicts.Load())
	}
	b.kube = c.racingClient(t, &races, 1000)
	req.Projects[0].Name = "Genomics III"
	_, err := b.SyncProjects(context.Background(), req)
	if !failure.IsTransient(err) || !strings.Contains(err.Error(), "5 times in a row") || b.kube.conflicts.Load() != 5 {
		t.Fatalf("err %v after %d conflicts", err, b.kube.conflicts.Load())
	}
}

// racingClient is a CR client whose first n reads of a custom resource are each followed by a
// status write of the operator before the answer arrives.
func (c *cluster) racingClient(t *testing.T, races *int, n int) *crClient {
	cfg := rest.CopyConfig(c.env.Config)
	cfg.Timeout = 10 * time.Second
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/managedrancherprojects/adamas-aaaaaaaa") && n > 0 {
				n--
				*races++
				c.operator("adamas-aaaaaaaa", map[string]any{"lastReconcileTime": time.Now().UTC().Format(time.RFC3339Nano), "phase": "Updating"}) // a new value each time: a status write that changes nothing keeps the resourceVersion
			}
			return resp, err
		})
	}
	k, err := newCRClient(cfg, c.ns, defaultRetry, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A dry run reads and reports; it creates, changes and deletes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	c := newCluster(t)
	b := c.backend(nil)
	req := realRequest()
	req.DryRun = true
	rep := sync1(t, b, req)
	if len(c.names()) != 0 || len(rep.Projects) != 2 || statesOf(rep)["ann/project_member"] != backends.GrantPending {
		t.Fatalf("dry run created %v / reported %+v", c.names(), rep)
	}
	req.DryRun = false
	sync1(t, b, req)
	c.create("adamas-stale", map[string]string{labelResource: realRes.UUID})
	req.DryRun = true
	req.Projects[0].Name = "changed"
	sync1(t, b, req)
	if got, _, _ := unstructured.NestedString(c.get("adamas-aaaaaaaa").Object, "spec", "projectName"); got != "Genomics" || len(c.names()) != 3 {
		t.Fatalf("dry run changed %q or pruned: %v", got, c.names())
	}
}
