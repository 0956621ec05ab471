package rke2

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
)

// Kubernetes upgrades (issue 17 item 11). Rancher rolls them in both bootstrap modes — the
// agent asks for the release and the strategy (Rancher.SetK8sVersion: servers one at a time,
// then upgrade_agent_batch agents at a time, each drained) and follows the nodes' kubelet
// versions until every node is Ready on the new release. An Update order asking for a version
// (new_options.k8s_version) stays executing until then; a change of the k8s_version setting
// is rolled out by health passes (health_pass.go) to every cluster one minor version behind.

// upgradeStrategy is the strategy the settings ask for.
func (b *Backend) upgradeStrategy() UpgradeStrategy {
	return UpgradeStrategy{AgentBatch: b.s.UpgradeAgentBatch, DrainTimeout: b.s.DrainTimeout}
}

// currentVersion is the release the cluster should run: Rancher's record, else (a cluster made
// before it was recorded) the lowest release its nodes report.
func currentVersion(rc RancherCluster, nodes []Node) string {
	if rc.K8sVersion != "" {
		return rc.K8sVersion
	}
	lowest := ""
	var low Version
	for i := range nodes {
		if v, ok := ParseVersion(nodes[i].Version); ok && (lowest == "" || v.Compare(low) < 0) {
			lowest, low = nodes[i].Version, v
		}
	}
	return lowest
}

// behind lists the registered nodes not yet Ready on version (an unknown version counts as
// behind: Rancher shows every registered node's kubelet version).
func behind(version string, nodes []Node) []string {
	var out []string
	for i := range nodes {
		n := &nodes[i]
		if n.VM == "" || n.Rancher == "" || n.Stage == StageRemove {
			continue
		}
		if n.Version != version || !nodeReady(n) {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// rolling: some node reports a release other than the cluster's (an upgrade is under way).
func rolling(version string, nodes []Node) bool {
	for i := range nodes {
		if v := nodes[i].Version; v != "" && v != version && nodes[i].Stage != StageRemove {
			return true
		}
	}
	return false
}

// upgrade takes the cluster to target ("" nothing) once its nodes are all ready: a public
// error for a downgrade or a skipped minor version, else ErrNotReady until every node is Ready
// on target.
func (b *Backend) upgrade(ctx context.Context, c *cluster, target string, nodes []Node) error {
	if target == "" {
		return nil
	}
	cur := currentVersion(c.rc, nodes)
	if cur != target {
		if err := CheckUpgrade(cur, target); err != nil {
			return err
		}
		if rolling(cur, nodes) {
			return notReady(c.ref, "waiting for the upgrade to %s still rolling before upgrading to %s", cur, target)
		}
		if err := b.d.Rancher.SetK8sVersion(ctx, c.ref, c.rc, target, b.upgradeStrategy()); err != nil {
			return fmt.Errorf("ask rancher to upgrade to %s: %w", target, err)
		}
		c.log.Info("kubernetes upgrade asked for", zap.String("from", cur), zap.String("to", target))
		c.rc.K8sVersion = target
	}
	if left := behind(target, nodes); len(left) > 0 {
		return notReady(c.ref, "upgrading to %s: %d of %d nodes not Ready on it yet (%s)", target, len(left), registered(nodes), strings.Join(left, ", "))
	}
	return nil
}

func registered(nodes []Node) int {
	n := 0
	for i := range nodes {
		if nodes[i].VM != "" && nodes[i].Rancher != "" && nodes[i].Stage != StageRemove {
			n++
		}
	}
	return n
}

// settingUpgrade is the release a health pass upgrades a settled cluster to because the
// k8s_version setting changed ("" none), or why it will not (blocked: a skipped minor).
func (b *Backend) settingUpgrade(rc RancherCluster, nodes []Node) (target, blocked string) {
	cur := currentVersion(rc, nodes)
	from, ok1 := ParseVersion(cur)
	to, ok2 := ParseVersion(b.s.K8sVersion)
	if !ok1 || !ok2 || to.Compare(from) <= 0 || rolling(cur, nodes) {
		return "", ""
	}
	if err := CheckUpgrade(cur, b.s.K8sVersion); err != nil {
		msg, _ := failure.PublicMessage(err)
		return "", "the k8s_version setting (" + b.s.K8sVersion + ") is not applied: " + msg
	}
	return b.s.K8sVersion, ""
}

// ClusterVersions finds the release a resource's cluster runs (the Evaluator's view of
// Rancher): the cluster labelled with the resource, and its recorded version.
type ClusterVersions interface {
	ClusterOf(ctx context.Context, uuid string) (string, error)
	Cluster(ctx context.Context, c ClusterRef) (RancherCluster, error)
}

// versionChange judges an Update order's Kubernetes version before approval: "" when it asks
// for none or for an upgrade the cluster may take, else the reason to reject it. An error means
// Rancher could not be asked (the order stays pending).
func (e *Evaluator) versionChange(ctx context.Context, uuid string, attrs map[string]any) (string, error) {
	target, err := requestedVersion(attrs)
	if err != nil || target == "" {
		msg, _ := failure.PublicMessage(err)
		return msg, nil
	}
	cur := e.Settings.K8sVersion
	if e.Versions != nil {
		name, err := e.Versions.ClusterOf(ctx, uuid)
		if err != nil {
			return "", fmt.Errorf("find the resource's cluster: %w", err)
		}
		if name != "" {
			rc, err := e.Versions.Cluster(ctx, ClusterRef{UUID: uuid, Name: name})
			if err != nil && !errors.Is(err, failure.ErrNotFound) {
				return "", fmt.Errorf("read cluster %s: %w", name, err)
			}
			if rc.K8sVersion != "" {
				cur = rc.K8sVersion
			}
		}
	}
	if err := CheckUpgrade(cur, target); err != nil {
		msg, _ := failure.PublicMessage(err)
		return msg, nil
	}
	return "", nil
}
