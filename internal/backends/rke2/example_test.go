package rke2_test

import (
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/config"
)

// The shipped example configuration loads and its backend_settings decode without warnings.
func TestExampleConfigSettings(t *testing.T) {
	cfg, warnings, err := config.Load("../../../configs/rke2.yaml", config.Options{Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	off := cfg.Offerings[0]
	s, warnings, err := rke2.DecodeSettings(off.BackendSettings)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("settings from the example: %v (warnings %v)", err, warnings)
	}
	if s.Bootstrap != rke2.BootstrapRancher || s.NodeDiskDriver != "vd" || s.CloudInit() == nil {
		t.Errorf("settings %+v", s)
	}
	for _, name := range []string{s.ServerNodesComponent, s.AgentNodesComponent} {
		if _, ok := off.Components.Get(name); !ok {
			t.Errorf("component %s missing from the example", name)
		}
	}
}
