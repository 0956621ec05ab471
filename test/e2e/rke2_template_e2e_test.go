package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRKE2SiteTemplateRefusedAtLoad: a site cloud-init template calling a function the renderer
// does not have, or reading a field NodeConfig does not have, stops the agent at start with
// exit code 2 and a message naming the setting, before any request upstream.
func TestRKE2SiteTemplateRefusedAtLoad(t *testing.T) {
	w := newRKE2World(t)
	for tmpl, want := range map[string]string{
		"#!/bin/sh\necho {{ upper .NodeName }}\n": `function "upper" not defined`,
		"#!/bin/sh\necho {{ .Flavor }}\n":         "can't evaluate field Flavor",
	} {
		path := filepath.Join(w.dir, "site.tmpl")
		if err := os.WriteFile(path, []byte(tmpl), 0o600); err != nil {
			t.Fatal(err)
		}
		w.writeConfig()
		cfg, err := os.ReadFile(w.config)
		if err != nil {
			t.Fatal(err)
		}
		const anchor = "      managed_rancher_worker_system_volume_size_gb: 64\n"
		if !strings.Contains(string(cfg), anchor) {
			t.Fatalf("config has no %q", anchor)
		}
		cfg = []byte(strings.Replace(string(cfg), anchor, anchor+"      cloud_init_template_file: "+path+"\n", 1))
		if err := os.WriteFile(w.config, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		w.reqs.reset()
		r := w.run("-m", "order_process", "-c", w.config, "--once")
		if r.code != 2 || !strings.Contains(r.stderr, "backend_settings.cloud_init_template_file") || !strings.Contains(r.stderr, want) {
			t.Errorf("template %q: exit %d, stderr:\n%s", tmpl, r.code, r.stderr)
		}
		if agent, _ := w.reqs.counts(); len(agent) != 0 {
			t.Errorf("template %q: requests before the config was refused: %v", tmpl, agent)
		}
	}
}
