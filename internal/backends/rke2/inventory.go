package rke2

import (
	"fmt"
	"strconv"
	"strings"
)

// Stage is where a node is in its life. The agent writes it before acting, so a pass that
// crashes half-way is finished by the next one: a node in StageRemove is drained and deleted
// whatever the desired counts say by then.
type Stage string

// Stages.
const (
	StageInstall Stage = "install" // created; installing, joined or ready
	StageRemove  Stage = "remove"  // drain and deletion started
)

// Inventory is what the agent remembers about a node. It lives on the node's OpenStack server
// (metadata and tags) and on its Rancher node (labels), never in a private database.
type Inventory struct {
	Cluster string // the Waldur resource UUID (hex) the node belongs to
	Role    Role
	Initial bool   // the server that bootstrapped the cluster (its config has no server:)
	Stage   Stage  // StageInstall or StageRemove
	Index   int    // per role; names are <cluster>-<role>-<index>
	Join    string // the server node this node joined through (rke2 bootstrap); "" for the initial server
}

// Kind is "initial" or "joining".
func (inv Inventory) Kind() string {
	if inv.Initial {
		return "initial"
	}
	return "joining"
}

// NodeName is the VM's and Rancher node's name: <cluster name>-<role>-<index>.
func NodeName(cluster string, r Role, index int) string {
	return fmt.Sprintf("%s-%s-%d", cluster, r, index)
}

// Keys of the OpenStack server metadata (Nova: keys and values ≤ 255 characters).
const (
	MetaCluster = "site-agent:rke2-cluster"
	MetaRole    = "site-agent:rke2-role"
	MetaKind    = "site-agent:rke2-kind"
	MetaStage   = "site-agent:rke2-stage"
	MetaIndex   = "site-agent:rke2-index"
	MetaJoin    = "site-agent:rke2-join"
)

// Tags on the OpenStack server, used to list a cluster's servers (Nova's tags filter); Nova
// tags are at most 60 characters and contain no "/" or ",".
const (
	TagManaged       = "site-agent-rke2"
	tagClusterPrefix = "rke2-cluster="
)

// ClusterTag is the tag that lists every server of a cluster.
func ClusterTag(cluster string) string { return tagClusterPrefix + cluster }

// Label keys on the Rancher node (Kubernetes qualified names; values are label values).
const (
	labelPrefix  = "rke2.site-agent.waldur.com/"
	LabelCluster = labelPrefix + "cluster"
	LabelRole    = labelPrefix + "role"
	LabelKind    = labelPrefix + "kind"
	LabelStage   = labelPrefix + "stage"
	LabelIndex   = labelPrefix + "index"
	LabelJoin    = labelPrefix + "join"
)

// clusterIDRe: the Waldur resource UUID as hex, which is also a valid label value and tag.
var clusterIDRe = &lazyRegexp{pattern: `^[0-9a-f]{32}$`}

// The inventory's keys in Nova server metadata and in Rancher node labels, in the order encode
// and decodeInventory use: cluster, role, kind, stage, index, join.
var (
	metaKeys  = [6]string{MetaCluster, MetaRole, MetaKind, MetaStage, MetaIndex, MetaJoin}
	labelKeys = [6]string{LabelCluster, LabelRole, LabelKind, LabelStage, LabelIndex, LabelJoin}
)

// Metadata encodes the inventory as Nova server metadata.
func (inv Inventory) Metadata() map[string]string { return inv.encode(metaKeys) }

// Tags encodes the inventory's searchable part as Nova server tags.
func (inv Inventory) Tags() []string { return []string{TagManaged, ClusterTag(inv.Cluster)} }

// Labels encodes the inventory as Rancher node labels.
func (inv Inventory) Labels() map[string]string { return inv.encode(labelKeys) }

func (inv Inventory) encode(k [6]string) map[string]string {
	m := map[string]string{
		k[0]: inv.Cluster, k[1]: inv.Role.String(), k[2]: inv.Kind(), k[3]: string(inv.Stage), k[4]: strconv.Itoa(inv.Index),
	}
	if inv.Join != "" {
		m[k[5]] = inv.Join
	}
	return m
}

// InventoryFromMetadata decodes Nova server metadata. ok is false when the server carries no
// rke2 inventory at all (not ours); err describes inventory that is present but broken.
func InventoryFromMetadata(m map[string]string) (inv Inventory, ok bool, err error) {
	return decodeInventory(m, metaKeys, "server metadata")
}

// InventoryFromLabels decodes Rancher node labels, like InventoryFromMetadata.
func InventoryFromLabels(m map[string]string) (inv Inventory, ok bool, err error) {
	return decodeInventory(m, labelKeys, "node label")
}

func decodeInventory(m map[string]string, k [6]string, what string) (Inventory, bool, error) {
	var inv Inventory
	cluster, ok := m[k[0]]
	if !ok {
		return inv, false, nil
	}
	bad := func(key, format string, args ...any) (Inventory, bool, error) {
		return inv, true, fmt.Errorf("%s %s: %s", what, key, fmt.Sprintf(format, args...))
	}
	if !clusterIDRe.get().MatchString(cluster) {
		return bad(k[0], "want 32 hex digits, got %q", cluster)
	}
	inv.Cluster = cluster
	role, ok := ParseRole(m[k[1]])
	if !ok || m[k[1]] == "worker" {
		return bad(k[1], "want server or agent, got %q", m[k[1]])
	}
	inv.Role = role
	switch m[k[2]] {
	case "initial":
		inv.Initial = true
	case "joining":
	default:
		return bad(k[2], "want initial or joining, got %q", m[k[2]])
	}
	if inv.Initial && role != RoleServer {
		return bad(k[2], "only a server can be the initial node")
	}
	switch st := Stage(m[k[3]]); st {
	case StageInstall, StageRemove:
		inv.Stage = st
	default:
		return bad(k[3], "want install or remove, got %q", m[k[3]])
	}
	idx, err := strconv.Atoi(m[k[4]])
	if err != nil || idx < 0 || strings.HasPrefix(m[k[4]], "+") || (len(m[k[4]]) > 1 && m[k[4]][0] == '0') {
		return bad(k[4], "want a non-negative number, got %q", m[k[4]])
	}
	inv.Index = idx
	inv.Join = m[k[5]]
	if inv.Join != "" && !dnsLabelRe.get().MatchString(inv.Join) {
		return bad(k[5], "want a node name, got %q", inv.Join)
	}
	if inv.Initial && inv.Join != "" {
		return bad(k[5], "the initial server joins no one, got %q", inv.Join)
	}
	return inv, true, nil
}
