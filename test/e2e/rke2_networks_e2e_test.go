package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// TestRKE2OverlappingNetworksRefused (issue 17 defect 1): a node subnet inside the pod network
// — the old default 10.42.0.0/22 — stops the agent with exit code 2 and a message naming both
// keys, before any request to Waldur, OpenStack or Rancher.
func TestRKE2OverlappingNetworksRefused(t *testing.T) {
	w := newRKE2World(t)
	w.writeConfigOn(simCloud{os: w.os, url: w.cloud.(simCloud).url, extra: "subnet_cidr: \"10.42.0.0/22\"\n"})
	r := w.run("-m", "order_process", "-c", w.config, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "backend_settings.cluster_cidr") || !strings.Contains(r.stderr, "backend_settings.openstack.subnet_cidr") {
		t.Fatalf("want exit 2 naming cluster_cidr and openstack.subnet_cidr: %s", r)
	}
	if n := w.sim.TotalCalls() + w.os.TotalCalls() + len(w.rs.Calls()); n != 0 {
		t.Fatalf("%d requests before the refusal", n)
	}
}

// TestRKE2PrivateRegistryRancherMode (issue 17 defect 5): with bootstrap rancher and a private
// registry with credentials, the provisioning cluster names the registry as
// system-default-registry and its credentials through a basic-auth secret in fleet-default —
// which the Rancher simulator, like Rancher's planner, requires before any machine gets a plan
// — with the pod and service networks in machineGlobalConfig; terminate deletes the secret;
// the password never shows in the agent's output.
func TestRKE2PrivateRegistryRancherMode(t *testing.T) {
	const password = "registry-pass-5f1c2d"
	w := newRKE2World(t, withSettings(fmt.Sprintf("private_registry_url: \"https://registry.example.com:5000\"\n"+
		"private_registry_user: \"puller\"\nprivate_registry_password: %q\ncluster_cidr: \"10.244.0.0/16\"\n", password)))
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits:     map[string]float64{"server_nodes": 1, "worker_nodes": 1},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 1, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 20480}})
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	got := w.waitOrder(t, p, create, "the cluster", 90*time.Second)
	secrets := w.rs.Secrets()
	name := "rke2-registry-" + got.ResourceUUID
	if len(secrets) != 1 || secrets[0].Name != name || secrets[0].Type != "kubernetes.io/basic-auth" ||
		secrets[0].Data["username"] != "puller" || secrets[0].Data["password"] != password {
		t.Fatalf("fleet-default secrets %+v", secrets)
	}
	prov, _ := w.rs.ProvisionedCluster(rke2Cluster)
	rke, _ := prov.Spec["rkeConfig"].(map[string]any)
	global, _ := rke["machineGlobalConfig"].(map[string]any)
	if global["system-default-registry"] != "registry.example.com:5000" || global["cluster-cidr"] != "10.244.0.0/16" || global["service-cidr"] != "10.43.0.0/16" {
		t.Fatalf("machineGlobalConfig %v", global)
	}
	if s := fmt.Sprint(rke["registries"]); !strings.Contains(s, "authConfigSecretName:"+name) {
		t.Fatalf("registries %s", s)
	}
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: got.ResourceUUID})
	w.waitOrder(t, p, term, "terminate", 60*time.Second)
	if left := w.rs.Secrets(); len(left) != 0 {
		t.Fatalf("secrets left after terminate: %+v", left)
	}
	if strings.Contains(p.out.String(), password) {
		t.Fatal("the registry password shows in the agent's output")
	}
}
