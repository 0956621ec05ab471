package openstack_test

import (
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/config"
)

// The shipped example configuration loads and builds an openstack backend without warnings.
func TestExampleConfigBuildsTheBackend(t *testing.T) {
	cfg, warnings, err := config.Load("../../../configs/openstack.yaml", config.Options{Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	off := cfg.Offerings[0]
	b, warnings, err := openstack.New(backends.Params{Offering: off.Name, Settings: off.BackendSettings, Components: off.Components})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("backend from the example: %v (warnings %v)", err, warnings)
	}
	set := backends.RolesOf("openstack", b)
	if set.Provisioner == nil || set.Members == nil || set.Usage == nil || set.Status == nil ||
		set.Metadata == nil || set.Diagnoser == nil || set.Pinger == nil || set.Closer == nil {
		t.Fatalf("roles missing: %+v", set)
	}
	if set.Limits != nil {
		t.Fatal("the openstack backend must not read limits back: membership sync would rewrite Waldur's limits from OpenStack's quotas")
	}
}
