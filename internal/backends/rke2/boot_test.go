package rke2

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
)

// TestRKE2ClusterBoots drives a whole rke2-bootstrap cluster: the planner's Create actions get
// fresh Vault credentials from ClusterVault (against vaultsim), their cloud-init is rendered,
// and each node boots in the node emulator — logs in to Vault once, reads the join token and
// joins the emulated RKE2 cluster, which refuses anything out of order or pointed at the wrong
// server. Every node must join, in the planner's order, with no refusal.
func TestRKE2ClusterBoots(t *testing.T) {
	ctx := context.Background()
	s, _, hc := vaultWorld(t, "bootstrap", "rke2")
	spec, err := ParseSpec(s, backends.Resource{Attributes: managedOrder("worker_nodes_count", 3.0)})
	if err != nil {
		t.Fatal(err)
	}
	cv, err := NewClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	joinToken := secret.New("K10cluster-join-token::server:abcdef")
	if err := cv.Ensure(ctx, testCluster, joinToken); err != nil {
		t.Fatal(err)
	}
	cluster := nodeemu.NewCluster(joinToken.Reveal())
	n := &nodes{s: s, spec: &spec, cv: cv, hc: hc, cluster: cluster, addr: map[string]string{}}
	boot, addr := n.boot, n.addr

	// Out of order first: an agent pointed at the initial server before that server exists.
	early := Action{Kind: Create, Node: "prod-agent-9", Inventory: Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Index: 9, Join: "prod-server-0"}}
	addr["prod-server-0"], addr[early.Node] = "10.0.0.11", "10.0.0.99"
	if err := boot(early); err == nil || !strings.Contains(err.Error(), "no live server") {
		t.Fatalf("an agent joined before the initial server: %v", err)
	}

	w := newWorld(t, 11)
	d := Desired{Cluster: testCluster, Name: spec.Name, Servers: spec.Servers, Agents: spec.Agents}
	for range 200 {
		p := PlanPass(d, w.observe())
		if p.Done {
			break
		}
		for _, a := range p.Actions {
			if a.Kind != Create {
				continue
			}
			if _, ok := addr[a.Node]; !ok {
				addr[a.Node] = fmt.Sprintf("10.0.0.%d", 11+len(addr))
			}
			if err := boot(a); err != nil {
				t.Fatalf("%s (%s): %v; cluster: %s", a.Node, a.Reason, err, cluster)
			}
		}
		w.apply(p)
		w.tick(false)
	}
	if got := len(cluster.Members()); got != spec.Servers+spec.Agents {
		t.Fatalf("%d members joined, want %d: %s", got, spec.Servers+spec.Agents, cluster)
	}
	if err := cv.Remove(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
}

// nodes boots planner-created nodes into the emulated cluster.
type nodes struct {
	s       *Settings
	spec    *ClusterSpec
	cv      *ClusterVault
	hc      *http.Client
	cluster *nodeemu.Cluster
	addr    map[string]string // node name → address
}

// boot gives a node fresh Vault credentials, renders its cloud-init and boots it.
func (n *nodes) boot(a Action) error {
	ctx := context.Background()
	creds, err := n.cv.NodeCredentials(ctx, testCluster)
	if err != nil {
		return err
	}
	defer creds.SecretID.Forget()
	ud, err := n.s.CloudInit().Render(NewNodeConfig(n.s, n.spec, a.Node, a.Inventory, creds, n.addr[a.Inventory.Join]))
	if err != nil {
		return err
	}
	b, err := nodeemu.Parse(ud.Bytes())
	if err != nil {
		return err
	}
	tok, err := b.Token(ctx, n.hc, n.s.VaultAddr())
	if err != nil {
		return err
	}
	return n.cluster.Join(b, tok, n.addr[a.Node])
}
