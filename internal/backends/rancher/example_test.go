package rancher

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/waldur/site-agent/internal/backends"
	agentconfig "github.com/waldur/site-agent/internal/config"
)

// The shipped example configuration loads, and every offering builds a backend without
// warnings; the GPU offering inherits the Rancher settings and adds its pool label.
func TestExampleConfig(t *testing.T) {
	cfg, warnings, err := agentconfig.Load("../../../configs/rancher.yaml", agentconfig.Options{Environ: func() []string { return nil }})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("load: %v %v", err, warnings)
	}
	if len(cfg.Offerings) != 2 {
		t.Fatalf("%d offerings", len(cfg.Offerings))
	}
	for _, off := range cfg.Offerings {
		b, warnings, err := New(backends.Params{Offering: off.Name, Settings: off.BackendSettings, Components: off.Components})
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%s: %v %v", off.Name, err, warnings)
		}
		c := core(b).cfg
		if c.baseURL != "https://rancher.example.com" || c.clusterID != "c-m-1234abcd" || !c.keycloak {
			t.Fatalf("%s: %v", off.Name, c)
		}
	}
	gpu := core(mustNew(t, cfg.Offerings[1])).cfg
	if gpu.labels["gpu-pool"] != "h100-2x" || len(gpu.quotaKeys) != 4 || gpu.quotaKeys[2].Key != "requests.nvidia.com/gpu-h100" {
		t.Fatalf("gpu offering: labels %v keys %v", gpu.labels, gpu.quotaKeys)
	}
}

func mustNew(t *testing.T, off agentconfig.Offering) backends.Backend {
	b, _, err := New(backends.Params{Settings: off.BackendSettings, Components: off.Components})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Kyverno policies are well-formed ClusterPolicies with the rules docs/rancher.md describes.
func TestKyvernoPolicies(t *testing.T) {
	type rule struct {
		Name    string
		Context []struct {
			APICall struct {
				URLPath  string `json:"urlPath"`
				JMESPath string `json:"jmesPath"`
			} `json:"apiCall"`
		}
		Exclude struct {
			Any []struct {
				Resources struct{ Names []string } `json:"resources"`
			}
		}
		Mutate   map[string]any
		Generate struct {
			Kind        string
			Synchronize bool
			Data        struct {
				Spec struct{ Hard map[string]string }
			}
		}
	}
	var policies = map[string]struct {
		Kind string
		Spec struct{ Rules []rule }
	}{}
	files, _ := filepath.Glob("../../../configs/kyverno/*.yaml")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Kind string
			Spec struct{ Rules []rule }
		}
		if err := yaml.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		policies[filepath.Base(f)] = p
	}
	sel, ok := policies["gpu-pool-node-selector.yaml"]
	if !ok || sel.Kind != "ClusterPolicy" || len(sel.Spec.Rules) != 1 {
		t.Fatalf("node selector policy: %+v", sel)
	}
	call := sel.Spec.Rules[0].Context[0].APICall
	if call.URLPath != "/api/v1/namespaces/{{ request.namespace }}" || call.JMESPath != `metadata.labels."gpu-pool" || ''` {
		t.Fatalf("apiCall %+v", call)
	}
	gen, ok := policies["default-no-gpu-quota.yaml"]
	if !ok || len(gen.Spec.Rules) != 1 {
		t.Fatalf("quota policy: %+v", gen)
	}
	g := gen.Spec.Rules[0]
	if g.Generate.Kind != "ResourceQuota" || !g.Generate.Synchronize || g.Generate.Data.Spec.Hard["requests.nvidia.com/gpu"] != "0" {
		t.Fatalf("generate %+v", g.Generate)
	}
	if names := g.Exclude.Any[0].Resources.Names; !slices.Equal(names, []string{"kube-system", "kube-public", "kube-node-lease", "kyverno"}) {
		t.Fatalf("excluded %v", names)
	}
}
