package rancherkccrd

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
)

// obs decodes a status as the operator would have written it.
func obs(t *testing.T, statusJSON string, generation int64) observed {
	t.Helper()
	var raw any
	if err := json.Unmarshal([]byte(statusJSON), &raw); err != nil {
		t.Fatal(err)
	}
	st, stale, ok := readStatus(raw, generation)
	if !ok {
		t.Fatalf("status %s unreadable", statusJSON)
	}
	return observed{present: true, stale: stale, status: st}
}

var grantsAB = []backends.Grant{
	{Role: "project_member", Username: "ann", UserUUID: "aa"}, {Role: "project_admin", Username: "bob", UserUUID: "bb"},
	{Role: "unmapped", Username: "eve"}, {Role: "project_member", Username: ""},
}

func TestGrantStatesFollowThePhase(t *testing.T) {
	c := testConfig(t, nil)
	rp := backends.ResourceProject{UUID: rpA, Grants: grantsAB}
	cases := []struct {
		name, status string
		generation   int64
		ann, bob     string
	}{
		{"no status yet", `null`, 1, backends.GrantPending, backends.GrantPending},
		{"pending", `{"phase":"Pending"}`, 1, backends.GrantPending, backends.GrantPending},
		{"creating", `{"phase":"Creating"}`, 1, backends.GrantPending, backends.GrantPending},
		{"deleting", `{"phase":"Deleting","keycloakRoleBindings":[{"syncedMembers":["ann"]}]}`, 1, backends.GrantPending, backends.GrantPending},
		{"ready, strings", `{"phase":"Ready","keycloakRoleBindings":[{"syncedMembers":["ann"]}]}`, 1, backends.GrantSynced, backends.GrantMissingInIdP},
		{"ready, objects", `{"phase":"Ready","keycloakRoleBindings":[{"syncedMembers":[{"userIdentifier":"bob"}]},{"syncedMembers":[{"userIdentifier":"ann"}]}]}`, 1, backends.GrantSynced, backends.GrantSynced},
		{"ready but stale", `{"phase":"Ready","observedGeneration":1,"keycloakRoleBindings":[{"syncedMembers":["ann"]}]}`, 2, backends.GrantPending, backends.GrantPending},
		{"ready, current", `{"phase":"Ready","observedGeneration":2,"keycloakRoleBindings":[{"syncedMembers":["ann","bob"]}]}`, 2, backends.GrantSynced, backends.GrantSynced},
		{"error", `{"phase":"Error"}`, 1, backends.GrantError, backends.GrantError},
		{"unknown phase", `{"phase":"Surprised"}`, 1, backends.GrantPending, backends.GrantPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.projectGrants(rp, obs(t, tc.status, tc.generation), "")
			if len(got) != 2 || got[0].Username != "ann" || got[1].Username != "bob" {
				t.Fatalf("reported %+v (unmapped roles and empty identifiers are not reported)", got)
			}
			if got[0].State != tc.ann || got[1].State != tc.bob || got[0].Scope != backends.ScopeResourceProject || got[0].ProjectUUID != rpA {
				t.Fatalf("ann %s bob %s, want %s %s", got[0].State, got[1].State, tc.ann, tc.bob)
			}
		})
	}
	got := c.projectGrants(rp, observed{}, "template too long")
	if got[0].State != backends.GrantError || got[0].Message != "template too long" {
		t.Fatalf("a resource project that cannot be written: %+v", got[0])
	}
	missing := c.projectGrants(rp, obs(t, `{"phase":"Ready"}`, 1), "")
	if missing[0].Message != msgNotConfirmed || c.projectGrants(rp, obs(t, `{"phase":"Error"}`, 1), "")[0].Message != msgProviderFailed {
		t.Fatalf("messages %+v", missing)
	}
}

func TestGrantsByUserUUID(t *testing.T) {
	c := testConfig(t, backends.Settings{"keycloak_use_user_id": true})
	got := c.projectGrants(backends.ResourceProject{UUID: rpA, Grants: grantsAB},
		obs(t, `{"phase":"Ready","keycloakRoleBindings":[{"syncedMembers":["aa"]}]}`, 1), "")
	want := []backends.GrantStatus{
		{Scope: "resource_project", ProjectUUID: rpA, Role: "project_member", State: "synced", UserUUID: "aa"},
		{Scope: "resource_project", ProjectUUID: rpA, Role: "project_admin", State: "missing_in_idp", Message: msgNotConfirmed, UserUUID: "bb"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

func TestClusterGrantsReadEveryResourceProject(t *testing.T) {
	c := testConfig(t, backends.Settings{"cluster_role_map": map[string]any{"resource_admin": "cluster-owner"}})
	grants := []backends.Grant{{Role: "resource_admin", Username: "ann"}, {Role: "resource_admin", Username: "bob"}, {Role: "other", Username: "eve"}}
	readyAnn := obs(t, `{"phase":"Ready","clusterKeycloakRoleBindings":[{"syncedMembers":[{"userIdentifier":"ann"}]}]}`, 1)
	cases := []struct {
		name     string
		all      []observed
		ann, bob string
	}{
		{"no resource project", nil, backends.GrantPending, backends.GrantPending},
		{"confirmed by the first, not the last", []observed{readyAnn, obs(t, `{"phase":"Updating"}`, 1)}, backends.GrantSynced, backends.GrantMissingInIdP},
		{"one failed, one ready", []observed{obs(t, `{"phase":"Error"}`, 1), readyAnn}, backends.GrantSynced, backends.GrantMissingInIdP},
		{"only failed", []observed{obs(t, `{"phase":"Error"}`, 1)}, backends.GrantError, backends.GrantError},
		{"in progress", []observed{obs(t, `{"phase":"Creating"}`, 1)}, backends.GrantPending, backends.GrantPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.clusterGrants(grants, tc.all)
			if len(got) != 2 || got[0].State != tc.ann || got[1].State != tc.bob || got[0].Scope != backends.ScopeResource || got[0].ProjectUUID != "" {
				t.Fatalf("got %+v, want ann %s bob %s", got, tc.ann, tc.bob)
			}
		})
	}
	if got := c.clusterGrants(grants, nil); got[0].Message != msgNoProjectYet {
		t.Fatalf("message %q", got[0].Message)
	}
}

func TestOutcomeAndMetadata(t *testing.T) {
	failed := obs(t, `{"phase":"Error","rancherProjectId":"c-m-1:p-abc","observedGeneration":3,"lastReconcileTime":"2026-11-26T10:00:00Z",
		"conditions":[{"type":"RancherProjectReady","status":true},{"type":"KeycloakGroupsReady","status":"False","reason":"Down","message":"Keycloak unreachable"},
		{"type":"MembershipSynced","status":false,"message":"3 users missing"},{"type":"ResourceQuotaReady","status":"Unknown"}],
		"keycloakRoleBindings":[{"groupName":"g1","keycloakGroupId":"k1","rancherBindingId":"b1","memberCount":2,"syncedMembers":["ann"]}],
		"namespaceName":"legacy"}`, 3)
	if o := outcome(rpA, failed, ""); o.Phase != backends.ProjectFailed || o.Message != "Keycloak unreachable; 3 users missing" {
		t.Fatalf("outcome %+v", o)
	}
	if o := outcome(rpA, obs(t, `{"phase":"Error","conditions":[{"type":"X","status":"False"}]}`, 1), ""); o.Message != "Operator reports Error phase" {
		t.Fatalf("outcome without messages %+v", o)
	}
	if o := outcome(rpA, obs(t, `{"phase":"Ready","observedGeneration":1}`, 2), ""); o.Phase != backends.ProjectInProgress {
		t.Fatalf("a stale Ready must not count: %+v", o)
	}
	if o := outcome(rpA, obs(t, `{"phase":"Ready"}`, 2), ""); o.Phase != backends.ProjectReady {
		t.Fatalf("ready %+v", o)
	}
	md := failed.metadata("adamas-8706dd1a", rpA)
	want := map[string]any{"name": "adamas-8706dd1a", "resource_project_uuid": rpA, "phase": "Error", "rancher_project_id": "c-m-1:p-abc",
		"last_reconcile_time": "2026-11-26T10:00:00Z", "observed_generation": int64(3),
		"failing_conditions": []any{
			map[string]any{"type": "KeycloakGroupsReady", "status": "False", "reason": "Down", "message": "Keycloak unreachable"},
			map[string]any{"type": "MembershipSynced", "status": "False", "message": "3 users missing"},
			map[string]any{"type": "ResourceQuotaReady", "status": "Unknown"}},
		"role_bindings": []any{map[string]any{"group_name": "g1", "keycloak_group_id": "k1", "rancher_binding_id": "b1", "member_count": int64(2)}},
	}
	if d := cmp.Diff(want, md); d != "" {
		t.Fatalf("metadata (-want +got):\n%s", d)
	}
	if _, _, ok := readStatus(map[string]any{"conditions": "not a list"}, 1); ok {
		t.Fatal("an unreadable status must be reported as such")
	}
}
