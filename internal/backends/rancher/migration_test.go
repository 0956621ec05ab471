package rancher

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
)

// bindingsOf lists "principal role" of a project's bindings, sorted.
func (f *fixture) bindingsOf(projectID string) []string {
	var out []string
	for _, bd := range f.rs.Bindings() {
		if bd.ProjectID == projectID {
			out = append(out, strings.TrimPrefix(bd.GroupPrincipalID+bd.UserPrincipalID, principalScheme)+" "+bd.RoleTemplateID)
		}
	}
	sort.Strings(out)
	return out
}

// bind adds a binding behind the agent's back and returns nothing; it fails the test on error.
func (f *fixture) bind(projectID, principal, role string) {
	f.t.Helper()
	if _, err := core(f.backend(nil)).v3.CreateBinding(ctxT(f.t), projectID, role, principal); err != nil {
		f.t.Fatal(err)
	}
}

// normanNamespace makes a namespace of the project as the incumbent did, through Rancher's
// /v3/clusters/<id>/namespaces (Rancher records its creator and the project assignment).
func (f *fixture) normanNamespace(name, projectID string) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "namespace", "name": name, "projectId": projectID})
	req, err := http.NewRequestWithContext(ctxT(f.t), http.MethodPost, f.settings["backend_url"].(string)+"/v3/clusters/"+f.cluster+"/namespaces", bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.rs.Token())
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the simulator's own certificate
	resp, err := hc.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		f.t.Fatalf("norman namespace %s: %s", name, resp.Status)
	}
}

// Item 3: two clusters behind one Rancher and realm. A new resource's group and binding name
// its cluster; the incumbent's group name is adopted for a project already bound to it only
// when no project of another cluster is bound to that name too — otherwise the project moves to
// the cluster-scoped group (and the shared binding is removed), so the other cluster's members
// no longer reach it.
func TestGroupNamesAcrossClusters(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	be := f.backend(nil, WithInventoryTTL(0))
	ctx := ctxT(t)
	role := "workloads-manage"
	parent := "/" + parentGroupName(f.cluster) + "/"

	fresh := mustCreate(t, be, f.resource(1), backends.Member{Username: f.kc.AddUser("alice").Username})
	scoped := scopedGroupName(f.cluster, "proj", role)
	if got := f.bindingsOf(fresh.BackendID); !slices.Equal(got, []string{scoped + " " + role}) {
		t.Fatalf("new resource bindings %v", got)
	}
	if _, ok := f.kc.GroupID(parent + scoped); !ok {
		t.Fatalf("groups %v", f.kc.Groups())
	}

	// The incumbent's projects: "solo" bound only here, "shared" bound here and in the other cluster.
	solo, shared := f.resource(2), f.resource(3)
	solo.ProjectSlug, shared.ProjectSlug = "solo", "shared"
	solo = f.seedProject(solo, f.cluster, "", "bob")
	shared = f.seedProject(shared, f.cluster, "", "carol")
	elsewhere := f.seedProject(f.resource(4), f.other, "")
	f.incumbentGroup(solo, "bob")
	f.incumbentGroup(shared, "carol")
	f.bind(solo.BackendID, principal(childGroupName("solo", role)), role)
	f.bind(shared.BackendID, principal(childGroupName("shared", role)), role)
	f.bind(elsewhere.BackendID, principal(childGroupName("shared", role)), role)

	f.kc.AddUser("dave")
	for _, res := range []backends.Resource{solo, shared} {
		if err := be.(backends.Reconciler).Reconcile(ctx, res); err != nil {
			t.Fatal(err)
		}
		if err := be.(backends.MembershipManager).AddMembers(ctx, res, []backends.Member{{Username: "dave"}}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		solo.BackendID:      {childGroupName("solo", role) + " " + role},
		shared.BackendID:    {scopedGroupName(f.cluster, "shared", role) + " " + role},
		elsewhere.BackendID: {childGroupName("shared", role) + " " + role}, // the other cluster's is not ours to touch
	}
	for id, w := range want {
		if got := f.bindingsOf(id); !cmp.Equal(got, w) {
			t.Errorf("bindings of %s: %v, want %v", id, got, w)
		}
	}
	recorded := map[string]string{}
	for _, p := range f.rs.Projects() {
		recorded[p.ID] = p.Annotations[annGroup]
	}
	if recorded[solo.BackendID] != childGroupName("solo", role) || recorded[shared.BackendID] != scopedGroupName(f.cluster, "shared", role) {
		t.Fatalf("recorded groups %v", recorded)
	}
	groups := f.kc.Groups()
	if _, ok := groups[parent+scopedGroupName(f.cluster, "solo", role)]; ok {
		t.Fatalf("a group was made for a project whose incumbent group was adopted: %v", groups)
	}
	if got := groups[parent+childGroupName("solo", role)]; !slices.Equal(got, []string{"bob", "dave"}) {
		t.Errorf("the adopted group's members: %v", got)
	}
	if got := groups[parent+scopedGroupName(f.cluster, "shared", role)]; !slices.Equal(got, []string{"dave"}) {
		t.Errorf("the new cluster-scoped group's members: %v (the team is added by the membership pass)", got)
	}
	for _, res := range []backends.Resource{fresh, solo, shared} {
		if err := be.(backends.Provisioner).Delete(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := f.kc.GroupID(parent + childGroupName("shared", role)); !ok {
		t.Fatalf("the incumbent's group still bound in the other cluster was deleted: %v", f.kc.Groups())
	}
}

// incumbentGroup makes the incumbent's child group of res with members.
func (f *fixture) incumbentGroup(res backends.Resource, members ...string) {
	f.t.Helper()
	pid, ok := f.kc.GroupID("/" + parentGroupName(f.cluster))
	if !ok {
		pid = mustV(f.t)(f.kc.AddGroup("", parentGroupName(f.cluster)))
	}
	gid := mustV(f.t)(f.kc.AddGroup(pid, childGroupName(res.ProjectSlug, "workloads-manage")))
	for _, m := range members {
		if err := f.kc.AddMember(f.kc.AddUser(m).ID, gid); err != nil {
			f.t.Fatal(err)
		}
	}
}

// Item 4: keycloakoidc_group:// bindings on a managed project that the agent did not make —
// another group, or its own group with another role — are removed on the next pass (each
// logged); user bindings stay; remove_stale_bindings: false keeps them.
func TestStaleGroupBindingsAreRemoved(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	ctx := ctxT(t)
	keep := f.backend(map[string]any{"remove_stale_bindings": false}, WithInventoryTTL(0))
	res := mustCreate(t, keep, f.resource(1))
	group := scopedGroupName(f.cluster, "proj", "workloads-manage")
	f.bind(res.BackendID, principal("project_intruder_workloads-manage"), "workloads-manage")
	f.bind(res.BackendID, principal(group), "project-owner")
	f.bind(res.BackendID, "local://u-admin1", "project-owner") // not a keycloak group
	all := []string{group + " project-owner", group + " workloads-manage", "local://u-admin1 project-owner",
		"project_intruder_workloads-manage workloads-manage"}
	sort.Strings(all)
	if err := keep.(backends.Reconciler).Reconcile(ctx, res); err != nil {
		t.Fatal(err)
	}
	if got := f.bindingsOf(res.BackendID); !cmp.Equal(got, all) {
		t.Fatalf("with remove_stale_bindings: false: %v", got)
	}
	obs, logs := observer.New(zap.InfoLevel)
	f.logger = zap.New(obs)
	prune := f.backend(nil, WithInventoryTTL(0))
	f.logger = nil
	if err := prune.(backends.Reconciler).Reconcile(ctx, res); err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, e := range logs.FilterMessage("stale keycloak group binding removed").All() {
		removed = append(removed, fmt.Sprint(e.ContextMap()["principal"], " ", e.ContextMap()["role"]))
	}
	sort.Strings(removed)
	if want := []string{principal(group) + " project-owner", principal("project_intruder_workloads-manage") + " workloads-manage"}; !slices.Equal(removed, want) {
		t.Errorf("logged removals %v, want %v", removed, want)
	}
	want := []string{"local://u-admin1 project-owner", group + " workloads-manage"}
	sort.Strings(want)
	if got := f.bindingsOf(res.BackendID); !cmp.Equal(got, want) {
		t.Fatalf("after the pass: %v, want %v", got, want)
	}
	if err := prune.(backends.Provisioner).Delete(ctx, res); err != nil {
		t.Fatal(err)
	}
}

// Item 5: allocation_prefix (a core key) is not part of Rancher project names, as with the
// incumbent: the core proposes "hpc_res-1", the project is project_prefix + "res-1", and an
// in-flight project of the incumbent's is adopted by that name after the migration.
func TestAllocationPrefixIsNotInProjectNames(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(map[string]any{"allocation_prefix": "HPC_"})
	legacy := map[string]string{annOrganization: "cust", annManaged: "true", annProjectSlug: "proj"}
	incumbent, err := f.rs.AddProject(f.cluster, f.prefix+"res-1", legacy)
	if err != nil {
		t.Fatal(err)
	}
	for i, proposed := range []string{"hpc_res-1", "hpc_res-2-1"} {
		res := f.resource(i + 1)
		info, err := be.(backends.Provisioner).Create(ctxT(t), backends.CreateRequest{Resource: res, Name: proposed})
		if err != nil {
			t.Fatalf("create %s: %v", proposed, err)
		}
		res.BackendID = info.BackendID
		if i == 0 && info.BackendID != incumbent.ID {
			t.Fatalf("the incumbent's project %s was not adopted: %+v", incumbent.ID, info)
		}
		if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, proposed := range []string{"hpc_res-1", "res-1", "", "hpc_x:p-1"} {
		names = append(names, core(be).nameFor(backends.CreateRequest{Resource: f.resource(1), Name: proposed}))
	}
	if want := []string{f.prefix + "res-1", f.prefix + "res-1", f.prefix + "res-1", f.prefix + "res-1"}; !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
}

// Item 7: labels dropped from namespace_labels are removed from the namespaces the agent made
// (it records the keys it set); labels someone else added stay.
func TestDroppedNamespaceLabelsAreRemoved(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	ctx := ctxT(t)
	first := f.backend(map[string]any{"namespace_labels": map[string]any{"gpu-pool": "h100-2x", "team": "physics"}}, WithInventoryTTL(0))
	res := mustCreate(t, first, f.resource(1))
	cs := f.env.Clientset.CoreV1().Namespaces()
	ns, err := cs.Get(ctx, f.prefix+"res-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["owner-note"] = "added-by-hand"
	if _, err := cs.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := f.backend(map[string]any{"namespace_labels": map[string]any{"gpu-pool": "a100"}}, WithInventoryTTL(0))
	if err := second.(backends.Reconciler).Reconcile(ctx, res); err != nil {
		t.Fatal(err)
	}
	ns, err = cs.Get(ctx, f.prefix+"res-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("gpu-pool=%s team=%q owner-note=%s psa=%s managed=%q", ns.Labels["gpu-pool"], ns.Labels["team"],
		ns.Labels["owner-note"], ns.Labels[psaEnforce], ns.Annotations[annLabels])
	if want := `gpu-pool=a100 team="" owner-note=added-by-hand psa=restricted managed="gpu-pool"`; got != want || hasKey(ns.Labels, "team") {
		t.Fatalf("namespace labels: %s, want %s", got, want)
	}
	third := f.backend(nil, WithInventoryTTL(0)) // namespace_labels removed altogether
	if err := third.(backends.Reconciler).Reconcile(ctx, res); err != nil {
		t.Fatal(err)
	}
	if ns, _ = cs.Get(ctx, f.prefix+"res-1", metav1.GetOptions{}); hasKey(ns.Labels, "gpu-pool") || ns.Labels["owner-note"] == "" {
		t.Fatalf("labels after namespace_labels went: %v", ns.Labels)
	}
	if err := third.(backends.Provisioner).Delete(ctx, res); err != nil {
		t.Fatal(err)
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
