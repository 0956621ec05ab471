package assembly

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/waldur/site-agent/internal/backends/rke2"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
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
	version := p.Metadata.Annotations[rke2.AnnotationK8sVersion] // an imported cluster's, once upgraded
	if version == "" {
		version = p.Spec.KubernetesVersion
	}
	return rke2.RancherCluster{Name: p.Metadata.Name, ManagementID: p.Status.ClusterName, State: state,
		ClusterCIDR: p.Metadata.Annotations[rke2.AnnotationClusterCIDR], ServiceCIDR: p.Metadata.Annotations[rke2.AnnotationServiceCIDR],
		K8sVersion: version, Paused: p.Metadata.Annotations[rke2.AnnotationReconcile] == rke2.ReconcilePaused,
		Imported: p.Spec.RKEConfig == nil}
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

// ClusterOf implements rke2.Rancher.
func (r rancherPort) ClusterOf(ctx context.Context, uuid string) (string, error) {
	list, err := r.c.ProvisioningClusters(ctx, map[string]string{rke2.LabelCluster: uuid})
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(list))
	for _, p := range list {
		if p.Metadata.DeletionTimestamp == "" {
			names = append(names, p.Metadata.Name)
		}
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return names[0], nil
	}
	return "", failure.Errorf("rancher: clusters %s are all labelled for resource %s; keep one", strings.Join(names, ", "), uuid)
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

// EnsureCluster implements rke2.Rancher: a cluster that is not there is made, after the
// registry secret it names; one that is there is taken as it is (its networks cannot change).
func (r rancherPort) EnsureCluster(ctx context.Context, ref rke2.ClusterRef, spec rke2.ProvisionSpec) (rke2.RancherCluster, error) {
	p, err := r.c.ProvisioningCluster(ctx, ref.Name)
	if errors.Is(err, failure.ErrNotFound) {
		if err = r.EnsureClusterSecrets(ctx, ref, spec); err != nil {
			return rke2.RancherCluster{}, err
		}
		meta := rancherapi.Meta{Labels: map[string]string{rke2.LabelCluster: ref.UUID}, Annotations: map[string]string{}}
		for k, v := range map[string]string{rke2.AnnotationClusterCIDR: spec.ClusterCIDR, rke2.AnnotationServiceCIDR: spec.ServiceCIDR} {
			if v != "" {
				meta.Annotations[k] = v
			}
		}
		p, err = r.c.CreateProvisioningCluster(ctx, ref.Name, meta, provSpec(ref, spec))
	}
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

// provSpec is the spec of the cluster to create: an RKE2 custom cluster (the CNI and networks,
// the data directories on the nodes' data volume, the private registry, the etcd snapshots and
// the upgrade strategy), or an imported one (no rkeConfig). machineGlobalConfig is every
// node's RKE2 configuration, each key kept for the roles that take it (rancher v2.12
// pkg/capr/planner/config.go addUserConfig, filter.go); system-default-registry there is also
// where Rancher pulls the cluster agent from, with the credentials of registries.configs[<that
// host>] (pkg/provisioningv2/image/resolve.go).
func provSpec(ref rke2.ClusterRef, spec rke2.ProvisionSpec) map[string]any {
	s := map[string]any{"kubernetesVersion": spec.K8sVersion}
	if spec.Imported {
		return s
	}
	global := map[string]any{"cni": spec.CNI}
	for k, v := range map[string]string{"cluster-cidr": spec.ClusterCIDR, "service-cidr": spec.ServiceCIDR} {
		if v != "" {
			global[k] = v
		}
	}
	rke := map[string]any{"machineGlobalConfig": global,
		"dataDirectories": map[string]any{"systemAgent": spec.DataDir + "/agent", "provisioning": spec.DataDir + "/provisioning", "k8sDistro": spec.DataDir + "/rke2"},
		"etcd":            etcdConfig(ref, spec.Etcd), "upgradeStrategy": upgradeStrategy(spec.Upgrade)}
	if spec.RegistryURL != "" {
		host := registryHost(spec.RegistryURL)
		global["system-default-registry"] = host
		regs := map[string]any{"mirrors": map[string]any{"docker.io": map[string]any{"endpoint": []string{spec.RegistryURL}}}}
		if spec.RegistryUser != "" {
			regs["configs"] = map[string]any{host: map[string]any{"authConfigSecretName": rke2.RegistrySecretName(ref.UUID)}}
		}
		rke["registries"] = regs
	}
	s["rkeConfig"] = rke
	return s
}

// etcdConfig is rkeConfig.etcd (rancher v2.12 pkg/apis/rke.cattle.io/v1 ETCD, ETCDSnapshotS3):
// the planner writes etcd-snapshot-schedule-cron and etcd-snapshot-retention into every etcd
// node's configuration and turns s3 into the etcd-s3-* options, the access and secret keys
// read from the cloudCredentialName secret's accessKey and secretKey (pkg/capr/planner
// config.go addETCD, s3args.go; a plain name is a secret of the cluster's namespace,
// fleet-default: pkg/controllers/capr/machineprovision/args.go GetCloudCredentialSecret).
func etcdConfig(ref rke2.ClusterRef, e rke2.EtcdSnapshots) map[string]any {
	out := map[string]any{"snapshotScheduleCron": e.ScheduleCron, "snapshotRetention": e.Retention}
	if s3 := e.S3; s3 != nil {
		m := map[string]any{"bucket": s3.Bucket, "skipSSLVerify": s3.SkipSSLVerify}
		for k, v := range map[string]string{"endpoint": s3.Endpoint, "folder": s3.Folder, "region": s3.Region} {
			if v != "" {
				m[k] = v
			}
		}
		if s3.AccessKey != "" {
			m["cloudCredentialName"] = rke2.EtcdS3SecretName(ref.UUID)
		}
		out["s3"] = m
	}
	return out
}

// upgradeStrategy is rkeConfig.upgradeStrategy (rancher v2.12 pkg/apis/rke.cattle.io/v1
// ClusterUpgradeStrategy): servers one at a time, agents in batches, each drained first.
func upgradeStrategy(u rke2.UpgradeStrategy) map[string]any {
	drain := map[string]any{"enabled": true, "force": true, "ignoreDaemonSets": true, "deleteEmptyDirData": true,
		"gracePeriod": -1, "timeout": int(u.DrainTimeout.Seconds())}
	return map[string]any{"controlPlaneConcurrency": "1", "workerConcurrency": strconv.Itoa(max(u.AgentBatch, 1)),
		"controlPlaneDrainOptions": drain, "workerDrainOptions": drain}
}

// registryHost is the registry's host[:port], as system-default-registry and the registries
// configs key want it.
func registryHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// fleetDefault is the namespace of provisioning clusters and the secrets they name.
const fleetDefault = "fleet-default"

// EnsureClusterSecrets implements rke2.Rancher: in fleet-default, labelled with the resource,
// the registry's kubernetes.io/basic-auth secret (username, password: rancher v2.12
// pkg/capr/planner/registry.go renderRegistries reads those keys) and the etcd snapshots' S3
// credential (accessKey, secretKey: pkg/capr/planner/s3args.go getS3Credential). Nothing for
// what is not configured, nor for an imported cluster (bootstrap rke2 nodes read both from
// Vault).
func (r rancherPort) EnsureClusterSecrets(ctx context.Context, ref rke2.ClusterRef, spec rke2.ProvisionSpec) error {
	if spec.Imported {
		return nil
	}
	labels := map[string]string{rke2.LabelCluster: ref.UUID}
	if spec.RegistryURL != "" && spec.RegistryUser != "" {
		err := r.c.EnsureSecret(ctx, rancherapi.SecretSpec{Namespace: fleetDefault, Name: rke2.RegistrySecretName(ref.UUID),
			Type: "kubernetes.io/basic-auth", Labels: labels,
			Data: map[string]secret.Secret{"username": secret.New(spec.RegistryUser), "password": spec.RegistryPassword}})
		if err != nil {
			return fmt.Errorf("registry secret: %w", err)
		}
	}
	if s3 := spec.Etcd.S3; s3 != nil && s3.AccessKey != "" {
		err := r.c.EnsureSecret(ctx, rancherapi.SecretSpec{Namespace: fleetDefault, Name: rke2.EtcdS3SecretName(ref.UUID),
			Type: "Opaque", Labels: labels,
			Data: map[string]secret.Secret{"accessKey": secret.New(s3.AccessKey), "secretKey": s3.SecretKey}})
		if err != nil {
			return fmt.Errorf("etcd s3 secret: %w", err)
		}
	}
	return nil
}

// DeleteCluster implements rke2.Rancher: failure.ErrNotReady until Rancher has removed it;
// then the cluster's registry secret goes (an absent one is success).
func (r rancherPort) DeleteCluster(ctx context.Context, ref rke2.ClusterRef) error {
	p, err := r.c.ProvisioningCluster(ctx, ref.Name)
	// gone, or a cluster of that name that is not ours: ours is gone
	if errors.Is(err, failure.ErrNotFound) || err == nil && p.Metadata.Labels[rke2.LabelCluster] != ref.UUID {
		for _, name := range []string{rke2.RegistrySecretName(ref.UUID), rke2.EtcdS3SecretName(ref.UUID)} {
			if err := r.c.DeleteSecret(ctx, fleetDefault, name); err != nil {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return err
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
		ready, since := n.Ready()
		out = append(out, rke2.RancherNodeView{ID: n.ID, Name: n.Name(), State: n.State, Labels: n.Labels,
			Ready: ready, ReadySince: since, Version: n.Info.Kubernetes.KubeletVersion})
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
	id, err := managed(rc)
	if err != nil {
		return rke2.Capacity{}, err
	}
	c, err := r.c.ClusterCapacity(ctx, id)
	return rke2.Capacity(c), err
}

// BindGroup implements rke2.Rancher: failure.ErrNotReady until Rancher has made the management
// cluster (its create answer has no id; v2.12.0 names it a moment later), where a binding with
// no cluster id would be refused for good (422).
func (r rancherPort) BindGroup(ctx context.Context, rc rke2.RancherCluster, principal, role string) error {
	id, err := managed(rc)
	if err != nil {
		return err
	}
	return r.c.BindClusterGroup(ctx, id, principal, role)
}

// UnbindGroups implements rke2.Rancher (nothing to unbind without a management cluster).
func (r rancherPort) UnbindGroups(ctx context.Context, rc rke2.RancherCluster, principals []string) error {
	if rc.ManagementID == "" {
		return nil
	}
	return r.c.UnbindClusterGroups(ctx, rc.ManagementID, principals)
}

// SetK8sVersion implements rke2.Rancher. A provisioned cluster: spec.kubernetesVersion and
// rkeConfig.upgradeStrategy, from which Rancher's planner drains and upgrades the machines,
// controlPlaneConcurrency then workerConcurrency at a time (rancher v2.12 pkg/capr/planner
// planner.go, kubeletVersionUpToDate). An imported RKE2 cluster: its management cluster's
// rke2Config (kubernetesVersion, rke2upgradeStrategy), from which Rancher deploys the
// system-upgrade-controller's server and agent plans with those concurrencies and drains
// (pkg/controllers/management/k3sbasedupgrade; RKE2's own docs ask that an imported cluster's
// plans be left to Rancher: docs.rke2.io/upgrades/automated), then the provisioning cluster's
// AnnotationK8sVersion records the release.
func (r rancherPort) SetK8sVersion(ctx context.Context, ref rke2.ClusterRef, rc rke2.RancherCluster, version string, u rke2.UpgradeStrategy) error {
	if !rc.Imported {
		want := upgradeStrategy(u)
		return r.c.UpdateProvisioningCluster(ctx, ref.Name, func(spec map[string]any, _ map[string]string) bool {
			rke, _ := spec["rkeConfig"].(map[string]any)
			if rke == nil {
				rke = map[string]any{}
				spec["rkeConfig"] = rke
			}
			if spec["kubernetesVersion"] == version && sameJSON(rke["upgradeStrategy"], want) {
				return false
			}
			spec["kubernetesVersion"], rke["upgradeStrategy"] = version, want
			return true
		})
	}
	id, err := managed(rc)
	if err != nil {
		return err
	}
	strategy := map[string]any{"serverConcurrency": 1, "workerConcurrency": max(u.AgentBatch, 1), "drainServerNodes": true, "drainWorkerNodes": true}
	if err := r.c.UpdateCluster(ctx, id, map[string]any{"rke2Config": map[string]any{"kubernetesVersion": version, "rke2upgradeStrategy": strategy}}); err != nil {
		return err
	}
	return r.c.UpdateProvisioningCluster(ctx, ref.Name, func(_ map[string]any, ann map[string]string) bool {
		if ann[rke2.AnnotationK8sVersion] == version {
			return false
		}
		ann[rke2.AnnotationK8sVersion] = version
		return true
	})
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// RemoveEtcdMember implements rke2.Rancher in both bootstrap modes alike: the downstream Node is
// annotated for RKE2's managed-etcd controller through Rancher's proxy, as Rancher itself does
// when an etcd machine is deleted (internal/clients/rancher/etcd.go cites both).
func (r rancherPort) RemoveEtcdMember(ctx context.Context, rc rke2.RancherCluster, node string) (bool, error) {
	id, err := managed(rc)
	if err != nil {
		return false, err
	}
	return r.c.RemoveEtcdMember(ctx, id, node)
}
