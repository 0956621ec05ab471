package rancherkccrd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/waldur/site-agent/internal/backends"
)

const (
	rpA = "8706dd1a00000000000000000000000a"
	rpB = "12345678000000000000000000000000"
)

func testConfig(t *testing.T, extra backends.Settings) *config {
	t.Helper()
	s := backends.Settings{"role_map": map[string]any{"project_member": "project-member", "project_admin": "project-owner"}}
	for k, v := range extra {
		s[k] = v
	}
	c, _, err := parseSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var testResource = backends.Resource{UUID: "aaaa0000000000000000000000000001", Slug: "adamas-cluster", BackendID: "c-m-glwxdksp",
	CustomerSlug: "hpc-demo-org", ProjectSlug: "genomics-2026"}

func TestDesiredSpecIsTheIncumbents(t *testing.T) {
	c := testConfig(t, backends.Settings{"cluster_role_map": map[string]any{"resource_admin": "cluster-owner"}})
	rp := backends.ResourceProject{UUID: rpA, Name: "Genomics", Description: "sequencing",
		Limits: map[string]any{"cpu": float64(4000), "memory": "16Gi", "storage": float64(0), "gpu": nil, "ram": float64(2)},
		Grants: []backends.Grant{
			{Role: "project_member", Username: "bob", UserUUID: "b0b"}, {Role: "project_admin", Username: "ann", UserUUID: "a11"},
			{Role: "project_member", Username: "", UserUUID: "c0c"}, {Role: "guest", Username: "eve", UserUUID: "e5e"},
		}}
	cluster, err := c.clusterBindings(testResource, []backends.Grant{{Role: "resource_admin", Username: "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	d := c.buildDesired(testResource, rp, cluster)
	if d.err != nil {
		t.Fatal(d.err)
	}
	got, _ := jsonMap(d.spec)
	want := map[string]any{
		"clusterId": "c-m-glwxdksp", "projectName": "Genomics", "description": "sequencing",
		"resourceUuid": testResource.UUID, "resourceProjectUuid": rpA,
		"resourceQuotas": map[string]any{"cpu": float64(4000), "memory": "16Gi"},
		"keycloak": map[string]any{"enabled": true, "parentGroupName": "c_c-m-glwxdksp", "roleBindings": []any{
			map[string]any{"groupName": "c_c-m-glwxdksp_" + rpA + "_project_admin", "rancherRole": "project-owner",
				"members": []any{map[string]any{"userIdentifier": "ann", "lookupByID": false}}},
			map[string]any{"groupName": "c_c-m-glwxdksp_" + rpA + "_project_member", "rancherRole": "project-member",
				"members": []any{map[string]any{"userIdentifier": "bob", "lookupByID": false}}},
		}},
		"cluster": map[string]any{"keycloak": map[string]any{"enabled": true, "roleBindings": []any{
			map[string]any{"groupName": "c_c-m-glwxdksp_cluster_resource_admin", "rancherRole": "cluster-owner",
				"members": []any{map[string]any{"userIdentifier": "ann", "lookupByID": false}}},
		}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("spec (-want +got):\n%s", diff)
	}
	if d.name != "adamas-cluster-8706dd1a" || d.labels[labelResource] != testResource.UUID || d.labels[labelProject] != rpA {
		t.Fatalf("name %s labels %v", d.name, d.labels)
	}
}

func TestDesiredSpecEdges(t *testing.T) {
	c := testConfig(t, backends.Settings{"keycloak_use_user_id": true,
		"group_name_template": "c_${cluster_id}_${customer_slug}_${project_slug}_${rp_uuid_short}_${role_name}"})
	rp := backends.ResourceProject{UUID: rpB, Name: "Empty",
		Grants: []backends.Grant{{Role: "project_member", Username: "bob", UserUUID: "B0B0-0000"}}}
	d := c.buildDesired(testResource, rp, nil)
	raw, _ := json.Marshal(d.spec)
	s := string(raw)
	for _, want := range []string{`"groupName":"c_c-m-glwxdksp_hpc-demo-org_genomics-2026_12345678_project_member"`,
		`"userIdentifier":"b0b00000","lookupByID":true`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s not in %s", want, s)
		}
	}
	for _, absent := range []string{"cluster", "resourceQuotas", "description", "namespace"} {
		if strings.Contains(s, `"`+absent+`"`) {
			t.Errorf("%q written in %s", absent, s)
		}
	}
	none := c.buildDesired(testResource, backends.ResourceProject{UUID: rpB, Name: "Nobody"}, []roleBinding{})
	raw, _ = json.Marshal(none.spec)
	if !strings.Contains(string(raw), `"keycloak":{"enabled":true,"parentGroupName":"c_c-m-glwxdksp","roleBindings":[]}`) ||
		!strings.Contains(string(raw), `"cluster":{"keycloak":{"enabled":true,"roleBindings":[]}}`) {
		t.Fatalf("empty bindings must be written as []: %s", raw)
	}
	long := testConfig(t, backends.Settings{"group_name_template": strings.Repeat("g", 240) + "${rp_uuid}"})
	if d := long.buildDesired(testResource, rp, nil); d.err == nil || !strings.Contains(d.err.Error(), "group_name_template") {
		t.Fatalf("a group name over 255 characters: %v", d.err)
	}
}

// The replace keeps what others wrote on the object: finalizers, annotations, other labels.
func TestMergeKeepsTheLiveObject(t *testing.T) {
	c := testConfig(t, nil)
	d := c.buildDesired(testResource, backends.ResourceProject{UUID: rpA, Name: "P"}, nil)
	spec, _ := jsonMap(d.spec)
	live := newObject(d, spec)
	live.SetResourceVersion("41")
	live.SetFinalizers([]string{"kopf.zalando.org/KopfFinalizerMarker"})
	live.SetAnnotations(map[string]string{"kopf.zalando.org/last-handled-configuration": "{}"})
	live.SetLabels(map[string]string{labelResource: testResource.UUID, labelProject: rpA, "team": "x"})
	_ = unstructured.SetNestedField(live.Object, "Ready", "status", "phase")
	if _, changed := merged(live, d, spec); changed {
		t.Fatal("an object that already matches must not be written")
	}
	d.spec.ProjectName = "Renamed"
	spec, _ = jsonMap(d.spec)
	next, changed := merged(live, d, spec)
	if !changed || next.GetResourceVersion() != "41" || len(next.GetFinalizers()) != 1 || next.GetLabels()["team"] != "x" ||
		next.GetAnnotations()["kopf.zalando.org/last-handled-configuration"] != "{}" || next.Object["status"] != nil {
		t.Fatalf("merged %v", next.Object)
	}
	if got, _, _ := unstructured.NestedString(next.Object, "spec", "projectName"); got != "Renamed" {
		t.Fatalf("spec not replaced: %v", next.Object["spec"])
	}
	if live.Object["status"] == nil {
		t.Fatal("merged changed the live object")
	}
}

func TestMatchesToleratesDefaultsOnly(t *testing.T) {
	want := map[string]any{"projectName": "P", "keycloak": map[string]any{"enabled": true, "roleBindings": []any{
		map[string]any{"groupName": "g", "members": []any{map[string]any{"userIdentifier": "ann", "lookupByID": false}}}}}}
	cases := []struct {
		name string
		live map[string]any
		ok   bool
	}{
		{"same", want, true},
		{"defaults filled in", map[string]any{"projectName": "P", "description": "", "organization": "", "keycloak": map[string]any{
			"enabled": true, "roleBindings": []any{map[string]any{"groupName": "g", "description": "",
				"members": []any{map[string]any{"userIdentifier": "ann", "lookupByID": false}}}}}}, true},
		{"someone's value", map[string]any{"projectName": "P", "organization": "x", "keycloak": want["keycloak"]}, false},
		{"quotas to remove", map[string]any{"projectName": "P", "resourceQuotas": map[string]any{"cpu": float64(1)}, "keycloak": want["keycloak"]}, false},
		{"a wanted key missing", map[string]any{"projectName": "P"}, false},
		{"a member fewer", map[string]any{"projectName": "P", "keycloak": map[string]any{"enabled": true, "roleBindings": []any{
			map[string]any{"groupName": "g", "members": []any{}}}}}, false},
		{"changed value", map[string]any{"projectName": "Q", "keycloak": want["keycloak"]}, false},
	}
	for _, c := range cases {
		if got := matches(c.live, want); got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, got, c.ok)
		}
	}
}
