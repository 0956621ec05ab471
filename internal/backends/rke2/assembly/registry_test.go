package assembly

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// at reads a nested field of a decoded spec ("" when absent).
func at(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

// Defects 1 and 5 of issue 17, bootstrap rancher: the provisioning cluster carries the pod and
// service networks and the private registry — system-default-registry, docker.io's mirror and
// the registry's credentials as a basic-auth secret in fleet-default that the strict simulator
// requires before any machine gets a plan; the secret follows a password change and goes with
// the cluster.
func TestProvisionedClusterNetworksAndRegistry(t *testing.T) {
	ctx := context.Background()
	sim, c, base := newSim(t)
	ref := rke2.ClusterRef{UUID: uuid, Name: "air"}
	spec := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", CNI: "cilium", DataDir: "/opt/rke2_storage",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", RegistryURL: "https://registry.example.com:5000",
		RegistryUser: "puller", RegistryPassword: secret.New("first-password")}
	rc, err := c.EnsureCluster(ctx, ref, spec)
	if err != nil || rc.ClusterCIDR != "10.244.0.0/16" || rc.ServiceCIDR != "10.96.0.0/12" {
		t.Fatalf("ensure: %+v %v", rc, err)
	}
	p, _ := sim.ProvisionedCluster("air")
	want := map[string]any{
		"cluster-cidr": "10.244.0.0/16", "service-cidr": "10.96.0.0/12", "system-default-registry": "registry.example.com:5000",
		"cni": "cilium"}
	for k, v := range want {
		if got := at(p.Spec, "rkeConfig", "machineGlobalConfig", k); got != v {
			t.Errorf("machineGlobalConfig %s = %v, want %v", k, got, v)
		}
	}
	if got := at(p.Spec, "rkeConfig", "registries", "configs", "registry.example.com:5000", "authConfigSecretName"); got != "rke2-registry-"+uuid {
		t.Errorf("registry auth secret %v", got)
	}
	if got := fmt.Sprint(at(p.Spec, "rkeConfig", "registries", "mirrors", "docker.io", "endpoint")); got != "[https://registry.example.com:5000]" {
		t.Errorf("docker.io mirror %v", got)
	}
	secrets := sim.Secrets()
	if len(secrets) != 1 || secrets[0].Name != "rke2-registry-"+uuid || secrets[0].Type != "kubernetes.io/basic-auth" ||
		secrets[0].Data["username"] != "puller" || secrets[0].Data["password"] != "first-password" || secrets[0].Labels[rke2.LabelCluster] != uuid {
		t.Fatalf("secrets %+v", secrets)
	}
	rc = clusterWithID(t, c, ref, spec)
	register(t, base, registration(t, c, rc).Token, "air-server-0", nil)
	waitFor(t, "the node to get its plan", func() bool {
		nodes, err := c.Nodes(ctx, rc)
		return err == nil && len(nodes) == 1 && nodes[0].State == "active"
	})
	spec.RegistryPassword = secret.New("rotated-password")
	if err := c.EnsureRegistrySecret(ctx, ref, spec); err != nil {
		t.Fatal(err)
	}
	if got := sim.Secrets(); got[0].Data["password"] != "rotated-password" {
		t.Fatalf("after the rotation: %+v", got)
	}
	if calls := sim.Calls(); calls["prov.create"] != 1 || calls["secret.create"] != 1 {
		t.Fatalf("calls %v", calls)
	}
	waitFor(t, "the cluster to go", func() bool { return c.DeleteCluster(ctx, ref) == nil })
	if len(sim.Secrets()) != 0 {
		t.Fatalf("the registry secret outlives its cluster: %+v", sim.Secrets())
	}
}

// clusterWithID ensures the cluster until Rancher has given it its management id.
func clusterWithID(t *testing.T, c rancherPort, ref rke2.ClusterRef, spec rke2.ProvisionSpec) rke2.RancherCluster {
	t.Helper()
	var rc rke2.RancherCluster
	waitFor(t, "the management id", func() bool {
		var err error
		rc, err = c.EnsureCluster(context.Background(), ref, spec)
		if err != nil && !errors.Is(err, failure.ErrNotReady) {
			t.Fatal(err)
		}
		return rc.ManagementID != ""
	})
	return rc
}

// An imported cluster (bootstrap rke2) gets no rkeConfig and no secret, but records its
// networks; a cluster made before the networks were recorded reads back none (RKE2's defaults).
func TestImportedClusterRecordsNetworks(t *testing.T) {
	ctx := context.Background()
	sim, c, _ := newSim(t)
	spec := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", Imported: true, ClusterCIDR: "10.42.0.0/16", ServiceCIDR: "10.43.0.0/16",
		RegistryURL: "https://registry.example.com:5000", RegistryUser: "puller", RegistryPassword: secret.New("p")}
	rc, err := c.EnsureCluster(ctx, rke2.ClusterRef{UUID: uuid, Name: "imp"}, spec)
	if err != nil || rc.ClusterCIDR != "10.42.0.0/16" || rc.ServiceCIDR != "10.43.0.0/16" {
		t.Fatalf("ensure: %+v %v", rc, err)
	}
	p, _ := sim.ProvisionedCluster("imp")
	if p.Spec["rkeConfig"] != nil || len(sim.Secrets()) != 0 {
		t.Fatalf("imported cluster spec %v, secrets %v", p.Spec, sim.Secrets())
	}
	old := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", Imported: true}
	rc, err = c.EnsureCluster(ctx, rke2.ClusterRef{UUID: uuid, Name: "old"}, old)
	if err != nil || rc.ClusterCIDR != "" || rc.ServiceCIDR != "" {
		t.Fatalf("a cluster without recorded networks: %+v %v", rc, err)
	}
	if strings.Contains(fmt.Sprint(sim.Calls()), "secret") {
		t.Fatalf("calls %v", sim.Calls())
	}
}
