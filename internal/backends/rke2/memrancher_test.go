package rke2

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// memRancher is memWorld's Rancher: clusters, their nodes as the VMs register, drains and
// bindings, behind the executor's Rancher port.
type memRancher struct{ w *memWorld }

func (m memRancher) EnsureCluster(_ context.Context, c ClusterRef, spec ProvisionSpec) (RancherCluster, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("EnsureCluster"); err != nil {
		return RancherCluster{}, err
	}
	for uuid, cl := range w.clusters {
		if cl.ref.Name == c.Name && uuid != c.UUID {
			return RancherCluster{}, fmt.Errorf("cluster %s: %w", c.Name, failure.ErrDuplicate)
		}
	}
	cl, ok := w.clusters[c.UUID]
	if !ok {
		cl = &memCluster{ref: c, spec: spec, nodes: map[string]*memNode{}}
		w.clusters[c.UUID] = cl
		return cl.view(), nil // the id comes a moment later
	}
	if cl.mgmtID == "" {
		cl.mgmtID = "c-m-" + c.UUID[:8]
	}
	return cl.view(), nil
}

func (m memRancher) Cluster(_ context.Context, c ClusterRef) (RancherCluster, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Cluster"); err != nil {
		return RancherCluster{}, err
	}
	cl, ok := w.clusters[c.UUID]
	if !ok || cl.ref.Name != c.Name {
		return RancherCluster{}, fmt.Errorf("cluster %s: %w", c.Name, failure.ErrNotFound)
	}
	return cl.view(), nil
}

// state is Rancher's: provisioning until a node is active, as Rancher shows a custom cluster.
func (c *memCluster) state() string {
	for _, n := range c.nodes {
		if n.view.State == "active" {
			return "active"
		}
	}
	return "provisioning"
}

func (m memRancher) ClusterOwner(_ context.Context, name string) (string, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("ClusterOwner"); err != nil {
		return "", err
	}
	for uuid, cl := range w.clusters {
		if cl.ref.Name == name {
			return uuid, nil
		}
	}
	return "", fmt.Errorf("cluster %s: %w", name, failure.ErrNotFound)
}

func (m memRancher) Kubeconfig(_ context.Context, rc RancherCluster) (Kubeconfig, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Kubeconfig"); err != nil {
		return Kubeconfig{}, err
	}
	return Kubeconfig{Server: "https://rancher.test/k8s/clusters/" + m.cluster(rc).mgmtID, Token: secret.New(fmt.Sprintf("kubeconfig-u:%d", w.calls["Kubeconfig"]))}, nil
}

func (m memRancher) cluster(rc RancherCluster) *memCluster {
	for _, cl := range m.w.clusters {
		if cl.mgmtID == rc.ManagementID && rc.ManagementID != "" {
			return cl
		}
	}
	m.w.t.Fatalf("no cluster %+v", rc)
	return nil
}

func (m memRancher) Registration(_ context.Context, rc RancherCluster) (Registration, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Registration"); err != nil {
		return Registration{}, err
	}
	id := m.cluster(rc).mgmtID
	return Registration{Token: secret.New("token-" + id), ManifestURL: secret.New("https://rancher.example.com/v3/import/token-" + id + "_" + id + ".yaml")}, nil
}

func (m memRancher) Nodes(_ context.Context, rc RancherCluster) ([]RancherNodeView, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Nodes"); err != nil {
		return nil, err
	}
	var out []RancherNodeView
	for _, n := range m.cluster(rc).nodes {
		v := n.view
		v.Labels = cloneLabels(n.view.Labels)
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func cloneLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m memRancher) node(rc RancherCluster, id string) *memNode {
	for _, n := range m.cluster(rc).nodes {
		if n.view.ID == id {
			return n
		}
	}
	return nil
}

func (m memRancher) SetNodeLabels(_ context.Context, rc RancherCluster, id string, labels map[string]string) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("SetNodeLabels"); err != nil {
		return err
	}
	n := m.node(rc, id)
	if n == nil {
		return fmt.Errorf("node %s: %w", id, failure.ErrNotFound)
	}
	for k, v := range labels {
		n.view.Labels[k] = v
	}
	return nil
}

func (m memRancher) Drain(_ context.Context, rc RancherCluster, id string) (bool, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Drain"); err != nil {
		return false, err
	}
	n := m.node(rc, id)
	if n == nil {
		return false, fmt.Errorf("node %s: %w", id, failure.ErrNotFound)
	}
	if n.view.Labels[LabelStage] != string(StageRemove) {
		w.t.Fatalf("node %s drained before it was marked for removal", n.view.Name)
	}
	if n.drain < 0 {
		n.drain = 0
	}
	return n.drain >= drainTicks, nil
}

func (m memRancher) DeleteNode(_ context.Context, rc RancherCluster, id string) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("DeleteNode"); err != nil {
		return err
	}
	cl := m.cluster(rc)
	for name, n := range cl.nodes {
		if n.view.ID == id {
			delete(cl.nodes, name)
		}
	}
	return nil
}

func (m memRancher) DeleteCluster(_ context.Context, c ClusterRef) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("DeleteCluster"); err != nil {
		return err
	}
	cl, ok := w.clusters[c.UUID]
	if !ok {
		return nil
	}
	if cl.deleting == 0 {
		cl.deleting = 2
	}
	return fmt.Errorf("cluster %s is being deleted: %w", c.Name, failure.ErrNotReady)
}

func (m memRancher) Capacity(_ context.Context, rc RancherCluster) (Capacity, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("Capacity"); err != nil {
		return Capacity{}, err
	}
	var c Capacity
	for _, n := range m.cluster(rc).nodes {
		if n.view.State == "active" {
			c.Nodes++
			c.CPUMillis += 8000
			c.MemoryBytes += 16 * gib
			c.StorageBytes += 100 * gib
		}
	}
	return c, nil
}

func (m memRancher) BindGroup(_ context.Context, rc RancherCluster, principal, role string) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	m.w.bindings[rc.ManagementID+" "+role+" "+principal] = true
	return nil
}

func (m memRancher) UnbindGroups(_ context.Context, rc RancherCluster, principals []string) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	for k := range m.w.bindings {
		for _, p := range principals {
			if strings.HasPrefix(k, rc.ManagementID+" ") && strings.HasSuffix(k, " "+p) {
				delete(m.w.bindings, k)
			}
		}
	}
	return nil
}
func (m memRancher) Ping(context.Context, time.Duration) error { return nil }
func (m memRancher) Diagnose(context.Context) []backends.Check {
	return []backends.Check{{Name: "rancher", OK: true, Detail: "in memory"}}
}
