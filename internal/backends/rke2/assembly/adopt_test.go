package assembly

import (
	"context"
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
)

// ClusterOf finds the provisioning cluster labelled with a resource's UUID through a label
// selector, whatever its name; none is "", and a cluster being deleted does not count.
func TestClusterOf(t *testing.T) {
	ctx := context.Background()
	sim, c, _ := newSim(t)
	spec := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", Imported: true}
	for _, ref := range []rke2.ClusterRef{{UUID: uuid, Name: "first-name"}, {UUID: "ffff" + uuid[4:], Name: "other"}} {
		if _, err := c.EnsureCluster(ctx, ref, spec); err != nil {
			t.Fatal(err)
		}
	}
	if name, err := c.ClusterOf(ctx, uuid); err != nil || name != "first-name" {
		t.Fatalf("ClusterOf: %q %v", name, err)
	}
	if name, err := c.ClusterOf(ctx, "eeee"+uuid[4:]); err != nil || name != "" {
		t.Fatalf("ClusterOf a resource without a cluster: %q %v", name, err)
	}
	if err := c.DeleteCluster(ctx, rke2.ClusterRef{UUID: uuid, Name: "first-name"}); err == nil {
		t.Fatal("deleted at once")
	}
	if name, err := c.ClusterOf(ctx, uuid); err != nil || name != "" {
		t.Fatalf("ClusterOf a cluster being deleted: %q %v", name, err)
	}
	if sim.Calls()["prov.list"] != 3 {
		t.Fatalf("calls %v", sim.Calls())
	}
}
