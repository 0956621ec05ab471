package rancherkccrd

import (
	"strings"
	"testing"
)

func TestCRName(t *testing.T) {
	long := strings.Repeat("a", 300)
	cases := []struct{ slug, rp, want string }{
		{"rancher-cluster", "8706dd1a-1234-4321-8888-0123456789ab", "rancher-cluster-8706dd1a"},
		{"-My-Cluster-", "8706DD1A123443218888012345678", "my-cluster-8706dd1a"},
		{"gpu_pool_2", "aaaaaaaabbbb", "gpu-pool-2-aaaaaaaa"},
		{"", "aaaaaaaabbbb", "resource-aaaaaaaa"},
		{long, "12345678ffff", strings.Repeat("a", 244) + "-12345678"},
	}
	for _, c := range cases {
		if got := crName(c.slug, c.rp); got != c.want {
			t.Errorf("crName(%.20q, %q) = %q, want %q", c.slug, c.rp, got, c.want)
		}
		if got := crName(c.slug, c.rp); len(got) > maxObjectName {
			t.Errorf("%d characters", len(got))
		}
	}
}

func TestRenderIsSafeSubstitution(t *testing.T) {
	v := vars{"cluster_id": "c-m-1", "role_name": "project_member", "rp_uuid": "8706dd1a", "project_name": "Genomics 2026"}
	cases := []struct{ tmpl, want string }{
		{"c_${cluster_id}_${rp_uuid}_${role_name}", "c_c-m-1_8706dd1a_project_member"},
		{"c_$cluster_id-x", "c_c-m-1-x"},
		{"${unknown}_$other_${cluster_id}", "${unknown}_$other_c-m-1"},
		{"$$cluster_id $5 ${", "$cluster_id $5 ${"},
		{"${project_name}", "Genomics 2026"},
		{"${customer_slug}", "${customer_slug}"}, // known but not set for this scope: kept as written
	}
	for _, c := range cases {
		got, err := render(c.tmpl, v)
		if err != nil || got != c.want {
			t.Errorf("render(%q) = %q, %v; want %q", c.tmpl, got, err, c.want)
		}
	}
	if got, err := render(strings.Repeat("x", 250)+"${rp_uuid}", vars{"rp_uuid": "12345"}); err != nil || len(got) != 255 {
		t.Fatalf("255 characters must pass: %d %v", len(got), err)
	}
	if _, err := render(strings.Repeat("x", 250)+"${rp_uuid}", vars{"rp_uuid": "123456"}); err == nil || !strings.Contains(err.Error(), "256 characters") {
		t.Fatalf("256 characters must fail: %v", err)
	}
}
