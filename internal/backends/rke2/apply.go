package rke2

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
)

// LabelRemoveSince is the Rancher node label holding when its removal (and drain) began, in
// Unix seconds: the drain timeout is judged from it, so it survives restarts.
const LabelRemoveSince = labelPrefix + "remove-since"

// apply carries out one plan's actions. Each is idempotent: a repeated call finds what an
// earlier one did. A node still draining is not an error; the next call looks again.
func (b *Backend) apply(ctx context.Context, c *cluster, actions []Action, servers map[string]ServerView, rnodes map[string]RancherNodeView) error {
	for _, a := range actions {
		var err error
		switch a.Kind {
		case Create:
			err = b.createNode(ctx, c, a, servers)
		case Remove:
			err = b.removeNode(ctx, c, a, servers, rnodes)
		case Replace:
			err = b.deleteNode(ctx, c, a, servers, rnodes)
		case Forget:
			if err = b.memberGone(ctx, c, a, servers); err == nil {
				err = b.forget(ctx, c, a.Node, rnodes)
			}
		}
		if err != nil {
			return fmt.Errorf("%s node %s: %w", a.Kind, a.Node, err)
		}
		c.log.Info("node action", zap.String("action", a.Kind.String()), zap.String("node", a.Node), zap.String("reason", a.Reason))
	}
	return nil
}

// createNode boots one VM whose cloud-init carries a fresh single-use Vault secret id.
func (b *Backend) createNode(ctx context.Context, c *cluster, a Action, servers map[string]ServerView) error {
	if err := b.ensureVault(ctx, c, a.Inventory.Initial); err != nil {
		return err
	}
	joinAddr := ""
	if a.Inventory.Join != "" {
		target, ok := servers[a.Inventory.Join]
		if !ok || target.Address == "" {
			return notReady(c.ref, "join target %s has no address yet", a.Inventory.Join)
		}
		joinAddr = target.Address
	}
	creds, err := b.d.Vault.NodeCredentials(ctx, c.ref.UUID)
	if err != nil {
		b.day2.setVault(c.ref.UUID, false) // the AppRole may be what is missing: the next call writes it again
		return fmt.Errorf("vault secret id: %w", err)
	}
	defer creds.SecretID.Forget()
	cfg := NewNodeConfig(b.s, c.spec, a.Node, a.Inventory, creds, joinAddr)
	cfg.ClusterCIDR, cfg.ServiceCIDR = c.rc.ClusterCIDR, c.rc.ServiceCIDR // the networks the cluster was made with
	if c.rc.K8sVersion != "" {
		cfg.K8sVersion = c.rc.K8sVersion // the release the cluster runs (or is being upgraded to), not the setting's
	}
	ud, err := b.s.CloudInit().Render(cfg)
	if err != nil {
		return failure.Errorf("cloud-init for %s: %v", a.Node, err)
	}
	net, err := b.network(ctx, c)
	if err != nil {
		return err
	}
	vm, listed := servers[a.Node] // this pass's listing
	_, err = b.d.Infra.CreateServer(ctx, c.ref, net, ServerRequest{Name: a.Node, Inventory: a.Inventory,
		Node: c.spec.Node(a.Inventory.Role, a.Inventory.Index), Image: b.s.BaseImageName, UserData: ud,
		FloatingIP: b.s.AllocateFloatingIPToAllNodes, SSHPublicKey: c.spec.SSHPublicKey, SecurityGroups: c.spec.SecurityGroups,
		Unlisted: !listed || vm.Status == "ERROR"})
	return err
}

// vaultFresh is how long the bootstrap Vault objects this process wrote for a cluster stand
// without being written again. A Create writes them for its first node and its later calls
// (a cycle apart) take them as written, with the registration token behind them; a failed
// secret id, the objects' removal or the time passing writes them again.
const vaultFresh = 10 * time.Minute

// ensureVault writes the cluster's policy, AppRole and token secret before a call creates
// nodes, unless this process wrote them less than vaultFresh ago. Bootstrap rancher: the token is the cluster's registration token, which Rancher keeps,
// and the secrets the cluster names (registry, etcd S3) are brought in step (a changed
// password, a secret deleted by hand) before a new machine needs a plan. Bootstrap rke2: the secret keeps the
// cluster's join token (made with the initial server, never again), the import manifest URL
// and registries.yaml.
func (b *Backend) ensureVault(ctx context.Context, c *cluster, initial bool) error {
	if c.vaultOK {
		return nil
	}
	if b.day2.vaultFresh(c.ref.UUID, vaultFresh) {
		c.vaultOK = true
		return nil
	}
	if b.s.Bootstrap == BootstrapRancher {
		if err := b.d.Rancher.EnsureClusterSecrets(ctx, c.ref, b.provisionSpec()); err != nil {
			return err
		}
	}
	reg, err := b.d.Rancher.Registration(ctx, c.rc)
	if err != nil {
		return fmt.Errorf("registration token: %w", err)
	}
	defer reg.Token.Forget()
	defer reg.ManifestURL.Forget()
	if b.s.Bootstrap == BootstrapRKE2 {
		err = b.ensureJoin(ctx, c, reg, initial)
	} else {
		err = b.d.Vault.Ensure(ctx, c.ref.UUID, reg.Token)
	}
	if err != nil {
		return fmt.Errorf("vault objects: %w", err)
	}
	c.vaultOK = true
	b.day2.setVault(c.ref.UUID, true)
	return nil
}

func (b *Backend) ensureJoin(ctx context.Context, c *cluster, reg Registration, initial bool) error {
	if reg.ManifestURL.IsZero() {
		return notReady(c.ref, "rancher has not given the cluster's import manifest URL yet")
	}
	registries, err := RegistriesYAML(b.s)
	if err != nil {
		return failure.Errorf("%v", err)
	}
	defer registries.Forget()
	etcdS3, err := EtcdS3YAML(b.s)
	if err != nil {
		return failure.Errorf("%v", err)
	}
	defer etcdS3.Forget()
	return b.d.Vault.EnsureJoin(ctx, c.ref.UUID, JoinSecret{ImportURL: reg.ManifestURL, Registries: registries, EtcdS3: etcdS3}, initial)
}

// removeNode marks the Rancher node as leaving (so the removal is finished whatever later
// orders ask), drains it, and once drained deletes the VM with its volumes and the Rancher node.
func (b *Backend) removeNode(ctx context.Context, c *cluster, a Action, servers map[string]ServerView, rnodes map[string]RancherNodeView) error {
	rn, registered := rnodes[a.Node]
	if registered {
		since, ok := removeSince(rn.Labels)
		if !ok || rn.Labels[LabelStage] != string(StageRemove) {
			since = b.d.Now()
			labels := map[string]string{LabelStage: string(StageRemove), LabelRemoveSince: strconv.FormatInt(since.Unix(), 10)}
			if err := b.d.Rancher.SetNodeLabels(ctx, c.rc, rn.ID, labels); err != nil {
				return fmt.Errorf("mark for removal: %w", err)
			}
		}
		drained, err := b.d.Rancher.Drain(ctx, c.rc, rn.ID)
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if !drained {
			if waited := b.d.Now().Sub(since); waited > b.s.DrainTimeout {
				return failure.Errorf("node %s has not drained in %s (drain timeout %s): its pods cannot be evicted "+
					"(a PodDisruptionBudget, or local data); drain it by hand and the removal continues", a.Node,
					waited.Round(time.Second), b.s.DrainTimeout)
			}
			return nil
		}
	}
	return b.deleteNode(ctx, c, a, servers, rnodes)
}

// deleteNode deletes the VM (with its volumes) and the Rancher node, whichever exist; a
// server's etcd member goes first (etcd.go).
func (b *Backend) deleteNode(ctx context.Context, c *cluster, a Action, servers map[string]ServerView, rnodes map[string]RancherNodeView) error {
	name := a.Node
	if err := b.memberGone(ctx, c, a, servers); err != nil {
		return err
	}
	if vm, ok := servers[name]; ok {
		if err := b.d.Infra.DeleteServer(ctx, c.ref, vm); err != nil {
			return fmt.Errorf("delete server: %w", err)
		}
	}
	return b.forget(ctx, c, name, rnodes)
}

// forget deletes the Rancher node of a VM that is gone.
func (b *Backend) forget(ctx context.Context, c *cluster, name string, rnodes map[string]RancherNodeView) error {
	if rn, ok := rnodes[name]; ok {
		if err := b.d.Rancher.DeleteNode(ctx, c.rc, rn.ID); err != nil {
			return fmt.Errorf("delete rancher node: %w", err)
		}
	}
	return nil
}

func removeSince(labels map[string]string) (time.Time, bool) {
	n, err := strconv.ParseInt(labels[LabelRemoveSince], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
