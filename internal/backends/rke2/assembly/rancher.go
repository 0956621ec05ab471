package assembly

import (
	"context"
	"errors"
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
)

// rancherPort is rke2.Rancher on the shared Rancher client. What it adds is the rke2 backend's
// own: the provisioning cluster's body, its label naming the Waldur resource (a cluster of that
// name with another label belongs to someone else), and the translation into rke2's types.
type rancherPort struct{ c *rancherapi.Client }

var _ rke2.Rancher = rancherPort{}

func view(p rancherapi.ProvisioningCluster) rke2.RancherCluster {
	state := "provisioning"
	if p.Status.Ready {
		state = "active"
	}
	if p.Metadata.DeletionTimestamp != "" {
		state = "removing"
	}
	return rke2.RancherCluster{Name: p.Metadata.Name, ManagementID: p.Status.ClusterName, State: state}
}

// Cluster implements rke2.Rancher.
func (r rancherPort) Cluster(ctx context.Context, ref rke2.ClusterRef) (rke2.RancherCluster, error) {
	p, err := r.c.ProvisioningCluster(ctx, ref.Name)
	if err != nil {
		return rke2.RancherCluster{}, err
	}
	if p.Metadata.Labels[rke2.LabelCluster] != ref.UUID {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s belongs to another resource: %w", ref.Name, failure.ErrNotFound)
	}
	return view(p), nil
}

// ClusterOwner implements rke2.ClusterNames: the resource UUID the provisioning cluster of that
// name is labelled with ("" when site-agent did not make it), failure.ErrNotFound when there
// is none.
func (r rancherPort) ClusterOwner(ctx context.Context, name string) (string, error) {
	p, err := r.c.ProvisioningCluster(ctx, name)
	if err != nil {
		return "", err
	}
	return p.Metadata.Labels[rke2.LabelCluster], nil
}

// EnsureCluster implements rke2.Rancher.
func (r rancherPort) EnsureCluster(ctx context.Context, ref rke2.ClusterRef, spec rke2.ProvisionSpec) (rke2.RancherCluster, error) {
	p, err := r.c.EnsureProvisioningCluster(ctx, ref.Name, map[string]string{rke2.LabelCluster: ref.UUID}, provSpec(spec))
	if err != nil {
		return rke2.RancherCluster{}, err
	}
	if owner := p.Metadata.Labels[rke2.LabelCluster]; owner != ref.UUID {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s is labelled for resource %q: %w", ref.Name, owner, failure.ErrDuplicate)
	}
	if p.Metadata.DeletionTimestamp != "" {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s is being deleted: %w", ref.Name, failure.ErrNotReady)
	}
	return view(p), nil
}

// provSpec is the spec of the cluster to create: an RKE2 custom cluster (the CNI, the data
// directories on the nodes' data volume, the private registry), or an imported one (no
// rkeConfig).
func provSpec(spec rke2.ProvisionSpec) map[string]any {
	s := map[string]any{"kubernetesVersion": spec.K8sVersion}
	if !spec.Imported {
		global := map[string]any{"cni": spec.CNI}
		rke := map[string]any{"machineGlobalConfig": global,
			"dataDirectories": map[string]any{"systemAgent": spec.DataDir + "/agent", "provisioning": spec.DataDir + "/provisioning", "k8sDistro": spec.DataDir + "/rke2"}}
		if spec.RegistryURL != "" {
			rke["registries"] = map[string]any{"mirrors": map[string]any{"docker.io": map[string]any{"endpoint": []string{spec.RegistryURL}}}}
		}
		s["rkeConfig"] = rke
	}
	return s
}

// DeleteCluster implements rke2.Rancher: failure.ErrNotReady until Rancher has removed it.
func (r rancherPort) DeleteCluster(ctx context.Context, ref rke2.ClusterRef) error {
	p, err := r.c.ProvisioningCluster(ctx, ref.Name)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Metadata.Labels[rke2.LabelCluster] != ref.UUID {
		return nil // a cluster of that name that is not ours: ours is gone
	}
	if p.Metadata.DeletionTimestamp == "" {
		if err := r.c.DeleteProvisioningCluster(ctx, ref.Name); err != nil {
			return err
		}
	}
	return fmt.Errorf("rancher cluster %s is being deleted: %w", ref.Name, failure.ErrNotReady)
}

// managed is the cluster's management id, failure.ErrNotReady until Rancher has assigned it.
func managed(rc rke2.RancherCluster) (string, error) {
	if rc.ManagementID == "" {
		return "", fmt.Errorf("cluster %s has no management id yet: %w", rc.Name, failure.ErrNotReady)
	}
	return rc.ManagementID, nil
}

// Registration implements rke2.Rancher.
func (r rancherPort) Registration(ctx context.Context, rc rke2.RancherCluster) (rke2.Registration, error) {
	id, err := managed(rc)
	if err != nil {
		return rke2.Registration{}, err
	}
	reg, err := r.c.Registration(ctx, id)
	return rke2.Registration{Token: reg.Token, ManifestURL: reg.ManifestURL}, err
}

// Kubeconfig implements rke2.Rancher.
func (r rancherPort) Kubeconfig(ctx context.Context, rc rke2.RancherCluster) (rke2.Kubeconfig, error) {
	id, err := managed(rc)
	if err != nil {
		return rke2.Kubeconfig{}, err
	}
	kc, err := r.c.GenerateKubeconfig(ctx, id)
	return rke2.Kubeconfig{Server: kc.Server, Token: kc.Token, CAData: kc.CAData}, err
}

// Nodes implements rke2.Rancher.
func (r rancherPort) Nodes(ctx context.Context, rc rke2.RancherCluster) ([]rke2.RancherNodeView, error) {
	if rc.ManagementID == "" {
		return nil, nil
	}
	list, err := r.c.Nodes(ctx, rc.ManagementID)
	if err != nil {
		return nil, err
	}
	out := make([]rke2.RancherNodeView, 0, len(list))
	for _, n := range list {
		out = append(out, rke2.RancherNodeView{ID: n.ID, Name: n.Name(), State: n.State, Labels: n.Labels})
	}
	return out, nil
}

// SetNodeLabels implements rke2.Rancher.
func (r rancherPort) SetNodeLabels(ctx context.Context, _ rke2.RancherCluster, id string, labels map[string]string) error {
	return r.c.SetNodeLabels(ctx, id, labels)
}

// Drain implements rke2.Rancher.
func (r rancherPort) Drain(ctx context.Context, _ rke2.RancherCluster, id string) (bool, error) {
	return r.c.DrainNode(ctx, id)
}

// DeleteNode implements rke2.Rancher.
func (r rancherPort) DeleteNode(ctx context.Context, _ rke2.RancherCluster, id string) error {
	return r.c.DeleteNode(ctx, id)
}

// Capacity implements rke2.Rancher.
func (r rancherPort) Capacity(ctx context.Context, rc rke2.RancherCluster) (rke2.Capacity, error) {
	c, err := r.c.ClusterCapacity(ctx, rc.ManagementID)
	return rke2.Capacity(c), err
}

// BindGroup implements rke2.Rancher.
func (r rancherPort) BindGroup(ctx context.Context, rc rke2.RancherCluster, principal, role string) error {
	return r.c.BindClusterGroup(ctx, rc.ManagementID, principal, role)
}

// UnbindGroups implements rke2.Rancher.
func (r rancherPort) UnbindGroups(ctx context.Context, rc rke2.RancherCluster, principals []string) error {
	return r.c.UnbindClusterGroups(ctx, rc.ManagementID, principals)
}

// Diagnose implements rke2.Rancher: the v3 and v1 APIs with the configured key.
func (r rancherPort) Diagnose(ctx context.Context) []backends.Check {
	check := func(name, path string, ping func(context.Context) error) backends.Check {
		if err := ping(ctx); err != nil {
			return backends.Check{Name: name, Detail: err.Error()}
		}
		return backends.Check{Name: name, OK: true, Detail: r.c.URL() + path}
	}
	return []backends.Check{check("rancher v3 api", "/v3/clusters?limit=1", r.c.PingV3),
		check("rancher v1 provisioning api", "/v1/provisioning.cattle.io.clusters/fleet-default", r.c.PingV1)}
}
