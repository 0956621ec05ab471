package rancher

import (
	"context"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

func TestGroupNames(t *testing.T) {
	cases := []struct{ in, want string }{
		{"c-m-test:p-test", "c_cmtestpt"}, // the incumbent's test fixture
		{"c-m-1234abcd", "c_cm1234ab"},
		{"c-j8276", "c_cj8276"},
		{"local", "c_local"},
	}
	for _, tc := range cases {
		if got := parentGroupName(tc.in); got != tc.want {
			t.Errorf("parentGroupName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := childGroupName("test-project", "workloads-manage"); got != "project_test-project_workloads-manage" {
		t.Errorf("child group %q", got)
	}
	if got := childGroupName("", "r"); got != "project_unknown-project_r" {
		t.Errorf("child group without slug %q", got)
	}
	if got := principal("project_x_r"); got != "keycloakoidc_group://project_x_r" {
		t.Errorf("principal %q", got)
	}
	if got := parentGroupDescription("c-m-1"); got != "Cluster access group for c-m-1" {
		t.Errorf("parent description %q", got)
	}
	if got := childGroupDescription("p", "r"); got != "Project p members with role r" {
		t.Errorf("child description %q", got)
	}
}

func TestDescription(t *testing.T) {
	res := backends.Resource{Name: "Test Project", CustomerSlug: "test-customer", ProjectSlug: "test-project"}
	if got := description(res); got != "Test Project (Customer: test-customer, Project: test-project)" {
		t.Errorf("slug fallback: %q", got)
	}
	res.CustomerName, res.ProjectName = "ACME", "Dark Matter"
	if got := description(res); got != "Test Project (Customer: ACME, Project: Dark Matter)" {
		t.Errorf("names: %q", got)
	}
}

func TestNamespaceNames(t *testing.T) {
	for _, ok := range []string{"waldur-test-resource", "a", "x-1", strings.Repeat("a", 63)} {
		if err := checkNamespaceName(ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"waldur-my_resource", "Waldur-x", "-x", "x-", strings.Repeat("a", 64), "a.b", ""} {
		err := checkNamespaceName(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if _, public := failure.PublicMessage(err); !public {
			t.Errorf("%q: error is not user-facing: %v", bad, err)
		}
	}
}

func TestNameFor(t *testing.T) {
	b := &Backend{cfg: &config{prefix: "waldur-"}}
	res := backends.Resource{UUID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", Slug: "Res-1"}
	cases := []struct{ proposed, want string }{
		{"res-1", "waldur-res-1"},
		{"res-1-2", "waldur-res-1-2"},       // the core's next candidate after a clash
		{"c-m-abc:p-xyz12", "waldur-res-1"}, // a recorded project id: derive again
		{"", "waldur-res-1"},                // no proposal
		{"RES-1", "waldur-res-1"},           // lower-cased
	}
	for _, tc := range cases {
		if got := b.nameFor(backends.CreateRequest{Resource: res, Name: tc.proposed}); got != tc.want {
			t.Errorf("nameFor(%q) = %q, want %q", tc.proposed, got, tc.want)
		}
	}
	res.Slug = ""
	if got := b.nameFor(backends.CreateRequest{Resource: res}); got != "waldur-resource-0f1e2d3c" {
		t.Errorf("no slug: %q", got)
	}
}

func TestPredictSlug(t *testing.T) {
	cases := []struct{ in, want string }{
		{"My Project", "my-project"},
		{"my_project", "my_project"},
		{"  --GPU  pool--  ", "gpu-pool"},
		{"Ünïcode Ñame!", "unicode-name"},
		{"a - b", "a-b"},
		{"日本", ""},
		{"_x_", "x"},
	}
	for _, tc := range cases {
		if got := predictSlug(tc.in); got != tc.want {
			t.Errorf("predictSlug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	be, _, err := New(backends.Params{Settings: map[string]any{"username": "token-x", "password": "s", "cluster_id": "c-m-1"},
		Components: testComps})
	if err != nil {
		t.Fatal(err)
	}
	ev := be.(backends.OrderEvaluator)
	ok := backends.Resource{UUID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", Name: "GPU pool A", CustomerSlug: "c", ProjectSlug: "p",
		Limits: backends.Quantities{"cpu": 4, "ram": 8.5, "gpu": 2}}
	mod := func(f func(*backends.Resource)) backends.Resource {
		r := ok
		r.Limits = ok.Limits.Clone()
		f(&r)
		return r
	}
	cases := []struct {
		name string
		typ  string
		res  backends.Resource
		want backends.Decision
		why  string
	}{
		{"valid create", "Create", ok, backends.Accept, ""},
		{"no customer slug", "Create", mod(func(r *backends.Resource) { r.CustomerSlug = "" }), backends.Reject, "missing slug fields (customer slug)"},
		{"no project slug", "Create", mod(func(r *backends.Resource) { r.ProjectSlug = "" }), backends.Reject, "project slug"},
		{"underscore in name", "Create", mod(func(r *backends.Resource) { r.Name = "my_gpus" }), backends.Reject, `"waldur-my_gpus" is not valid`},
		{"too long", "Create", mod(func(r *backends.Resource) { r.Name = strings.Repeat("x", 60) }), backends.Reject, "must be no more than 63"},
		{"slug known", "Create", mod(func(r *backends.Resource) { r.Name, r.Slug = "my_gpus", "my-gpus" }), backends.Accept, ""},
		{"name of symbols", "Create", mod(func(r *backends.Resource) { r.Name = "!!!" }), backends.Accept, ""},
		{"fractional gpu", "Create", mod(func(r *backends.Resource) { r.Limits["gpu"] = 1.5 }), backends.Reject, "limit gpu=1.5 (count): must be a whole number"},
		{"negative cpu update", "Update", mod(func(r *backends.Resource) { r.Limits["cpu"] = -1 }), backends.Reject, "limit cpu=-1 (cores): must not be negative"},
		{"RAM that would wrap to 0", "Create", mod(func(r *backends.Resource) { r.Limits["ram"] = 17179869184 }), backends.Reject, "limit ram=1.7179869184e+10 (GiB): is too large"},
		{"CPU that would wrap negative", "Update", mod(func(r *backends.Resource) { r.Limits["cpu"] = 1e16 }), backends.Reject, "limit cpu=1e+16 (cores): is too large"},
		{"valid update", "Update", ok, backends.Accept, ""},
		{"terminate", "Terminate", mod(func(r *backends.Resource) { r.CustomerSlug = "" }), backends.Accept, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dec, why, err := ev.Evaluate(context.Background(), backends.OrderReview{Type: tc.typ, Resource: tc.res})
			if err != nil || dec != tc.want || !strings.Contains(why, tc.why) {
				t.Fatalf("Evaluate = %v %q %v; want %v mentioning %q", dec, why, err, tc.want, tc.why)
			}
		})
	}
}
