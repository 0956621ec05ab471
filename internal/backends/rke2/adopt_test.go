package rke2

import (
	"context"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
)

// Item 13 of issue 17: a resource whose backend id was lost (and which was renamed since) gets
// the cluster made earlier for it back — found by Rancher's label, or, with no Rancher cluster
// left, by its servers' tag — instead of a second one under the new name.
func TestCreateAdoptsTheResourcesCluster(t *testing.T) {
	w := newMemWorld(t, 31)
	createCluster(t, w, 1, 1)
	lost := clusterResource(1, 1)
	lost.Attributes = managedOrder("name", "renamed")
	info, err := memBackend(t, w).Create(context.Background(), backends.CreateRequest{Resource: lost})
	if err != nil || info.BackendID != "prod" {
		t.Fatalf("create after the backend id was lost: %+v %v", info, err)
	}
	w.mu.Lock()
	delete(w.clusters, testCluster) // Rancher lost it too: the servers still say whose they are
	w.mu.Unlock()
	name, err := memBackend(t, w).locate(context.Background(), testCluster)
	if err != nil || name != "prod" {
		t.Fatalf("located from the servers: %q %v", name, err)
	}
	if name, err := memBackend(t, w).locate(context.Background(), "ffffffffffffffffffffffffffffffff"); err != nil || name != "" {
		t.Fatalf("a resource with nothing made: %q %v", name, err)
	}
	if s, a, _ := w.counts(testCluster); s != 1 || a != 1 {
		t.Fatalf("%d servers, %d agents", s, a)
	}
}
