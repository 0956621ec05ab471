package rancherv1

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
)

// LabelCluster on the provisioning cluster holds the Waldur resource UUID it belongs to.
const LabelCluster = "rke2.site-agent.waldur.com/cluster"

const provPath = "/v1/provisioning.cattle.io.clusters/fleet-default"

type provCluster struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp string            `json:"deletionTimestamp,omitempty"`
	} `json:"metadata"`
	Status struct {
		ClusterName string `json:"clusterName"`
		Ready       bool   `json:"ready"`
	} `json:"status"`
}

func (p provCluster) view() rke2.RancherCluster {
	state := "provisioning"
	if p.Status.Ready {
		state = "active"
	}
	if p.Metadata.DeletionTimestamp != "" {
		state = "removing"
	}
	return rke2.RancherCluster{Name: p.Metadata.Name, ManagementID: p.Status.ClusterName, State: state}
}

// get reads the provisioning cluster named c.Name (failure.ErrNotFound when absent).
func (c *Client) get(ctx context.Context, name string) (provCluster, error) {
	var p provCluster
	err := c.do(ctx, http.MethodGet, provPath+"/"+name, nil, &p)
	return p, err
}

// Cluster finds the cluster of c without creating it.
func (c *Client) Cluster(ctx context.Context, ref rke2.ClusterRef) (rke2.RancherCluster, error) {
	p, err := c.get(ctx, ref.Name)
	if err != nil {
		return rke2.RancherCluster{}, err
	}
	if p.Metadata.Labels[LabelCluster] != ref.UUID {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s belongs to another resource: %w", ref.Name, failure.ErrNotFound)
	}
	return p.view(), nil
}

// ClusterOwner implements rke2.ClusterNames: the resource UUID the provisioning cluster of
// that name is labelled with ("" when site-agent did not make it), failure.ErrNotFound when
// there is none.
func (c *Client) ClusterOwner(ctx context.Context, name string) (string, error) {
	p, err := c.get(ctx, name)
	if err != nil {
		return "", err
	}
	return p.Metadata.Labels[LabelCluster], nil
}

// EnsureCluster finds or creates the cluster.
func (c *Client) EnsureCluster(ctx context.Context, ref rke2.ClusterRef, spec rke2.ProvisionSpec) (rke2.RancherCluster, error) {
	p, err := c.get(ctx, ref.Name)
	if errors.Is(err, failure.ErrNotFound) {
		err = c.do(ctx, http.MethodPost, provPath, provBody(ref, spec), &p)
		if isConflict(err) { // created by a request whose answer was lost: read it
			p, err = c.get(ctx, ref.Name)
		}
	}
	if err != nil {
		return rke2.RancherCluster{}, err
	}
	if owner := p.Metadata.Labels[LabelCluster]; owner != ref.UUID {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s is labelled for resource %q: %w", ref.Name, owner, failure.ErrDuplicate)
	}
	if p.Metadata.DeletionTimestamp != "" {
		return rke2.RancherCluster{}, fmt.Errorf("rancher cluster %s is being deleted: %w", ref.Name, failure.ErrNotReady)
	}
	return p.view(), nil
}

func isConflict(err error) bool {
	var se *failure.StatusError
	return errors.As(err, &se) && se.Code == http.StatusConflict
}

// provBody is the cluster to create: an RKE2 custom cluster (cilium, the data directories on
// the nodes' data volume, the private registry), or an imported one (no rkeConfig).
func provBody(ref rke2.ClusterRef, spec rke2.ProvisionSpec) map[string]any {
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
	return map[string]any{"type": "provisioning.cattle.io.cluster",
		"metadata": map[string]any{"name": ref.Name, "namespace": "fleet-default", "labels": map[string]string{LabelCluster: ref.UUID}},
		"spec":     s}
}

// DeleteCluster deletes the cluster; failure.ErrNotReady until Rancher has removed it.
func (c *Client) DeleteCluster(ctx context.Context, ref rke2.ClusterRef) error {
	p, err := c.get(ctx, ref.Name)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Metadata.Labels[LabelCluster] != ref.UUID {
		return nil // a cluster of that name that is not ours: ours is gone
	}
	if p.Metadata.DeletionTimestamp == "" {
		if err := c.do(ctx, http.MethodDelete, provPath+"/"+ref.Name, nil, nil); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return err
		}
	}
	return fmt.Errorf("rancher cluster %s is being deleted: %w", ref.Name, failure.ErrNotReady)
}
