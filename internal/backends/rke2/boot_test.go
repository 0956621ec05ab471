package rke2

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
)

// TestRKE2ClusterBoots drives a whole rke2-bootstrap cluster: the cluster's Vault secret is
// written by ClusterVault.EnsureJoin (join token made once, Rancher's import manifest URL,
// registries.yaml) against vaultsim, the planner's Create actions get fresh Vault credentials,
// their cloud-init is rendered, and each node boots in the node emulator — logs in to Vault
// once, reads the secret, a server fetches the import manifest from the Rancher simulator,
// joins the emulated RKE2 cluster (which refuses anything out of order, pointed at the wrong
// server or with another token), and the applied manifest's cluster agent reports the nodes to
// Rancher. Every node must join, in the planner's order, with no refusal, and show in Rancher.
func TestRKE2ClusterBoots(t *testing.T) { clusterBoots(t, false) }

// TestRKE2ClusterBootsScriptReal (tier 2) is TestRKE2ClusterBoots with each node's rendered
// bootstrap script run for real by /bin/sh in a sandbox (nodeemu.Sandbox: the host's curl, sed
// and base64 against the Vault simulator and Rancher's import manifest; the RKE2 installer
// and systemctl stand-ins), RKE2 started from the config.yaml, registries.yaml and manifest it
// wrote.
func TestRKE2ClusterBootsScriptReal(t *testing.T) {
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	if err := nodeemu.SandboxAvailable(); err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	clusterBoots(t, true)
}

func clusterBoots(t *testing.T, script bool) {
	ctx := context.Background()
	installer := httptest.NewServer(nodeemu.ServeStandIn(nodeemu.RKE2Installer))
	t.Cleanup(installer.Close)
	s, _, hc := vaultWorld(t, "bootstrap", "rke2", "private_registry_url", "https://registry.example.com:5000",
		"private_registry_user", "puller", "private_registry_password", "registry-password", "rke2_install_url", installer.URL+"/")
	spec, err := ParseSpec(s, backends.Resource{Attributes: managedOrder("worker_nodes_count", 3.0)})
	if err != nil {
		t.Fatal(err)
	}
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	rs := ranchersim.New(ranchersim.Options{Seed: 9, NodeActiveAfter: time.Millisecond})
	rsrv := httptest.NewServer(rs)
	t.Cleanup(rsrv.Close)
	cid, manifestURL := importedRancherCluster(t, rsrv.URL, rs.Token())
	reg, err := RegistriesYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := cv.EnsureJoin(ctx, testCluster, JoinSecret{ImportURL: secret.New(manifestURL), Registries: reg}, true); err != nil {
		t.Fatal(err)
	}
	cluster := nodeemu.NewCluster("") // the initial server brings the cluster's token
	n := &nodes{s: s, spec: &spec, cv: cv, hc: hc, cluster: cluster, addr: map[string]string{}}
	if script {
		n.sandboxes = t.TempDir()
	}
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
	want := spec.Servers + spec.Agents
	if got := len(cluster.Members()); got != want {
		t.Fatalf("%d members joined, want %d: %s", got, want, cluster)
	}
	time.Sleep(5 * time.Millisecond)
	active := 0
	for _, rn := range rs.Nodes() {
		if rn.ClusterID == cid && rn.State == "active" && rn.Labels[LabelCluster] == testCluster {
			active++
		}
	}
	if active != want {
		t.Fatalf("%d active nodes in Rancher, want %d: %+v", active, want, rs.Nodes())
	}
	if err := cv.Remove(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
}

// importedRancherCluster creates an imported provisioning cluster (no rkeConfig) and its
// registration token on the Rancher simulator with the shared Rancher client; it returns the
// management id and manifest URL.
func importedRancherCluster(t *testing.T, base, token string) (string, string) {
	t.Helper()
	cid, reg := rancherClusterSpec(t, base, token, map[string]any{"kubernetesVersion": DefaultK8sVersion})
	return cid, reg.ManifestURL.Reveal()
}

// rancherClusterSpec creates the provisioning cluster "prod" with spec and its registration.
func rancherClusterSpec(t *testing.T, base, token string, spec map[string]any) (string, rancherapi.Registration) {
	t.Helper()
	ctx := context.Background()
	c, err := rancherapi.New(rancherapi.Config{URL: base, Token: secret.New(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.EnsureProvisioningCluster(ctx, "prod", rancherapi.Meta{}, spec)
	for deadline := time.Now().Add(5 * time.Second); err == nil && p.Status.ClusterName == "" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // Rancher names the management cluster a moment later
		p, err = c.ProvisioningCluster(ctx, "prod")
	}
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.Registration(ctx, p.Status.ClusterName)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.ClusterName, reg
}

// nodes boots planner-created nodes into the emulated cluster.
type nodes struct {
	s       *Settings
	spec    *ClusterSpec
	cv      *ClusterVault
	hc      *http.Client
	cluster *nodeemu.Cluster
	addr    map[string]string // node name → address
	// sandboxes: run each node's script for real in a sandbox under this directory ("": the
	// emulator reads the script, nodeemu.Parse).
	sandboxes string
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
	if n.sandboxes != "" {
		return n.runScript(ctx, a.Node, ud)
	}
	b, err := nodeemu.Parse(ud.Bytes())
	if err != nil {
		return err
	}
	return n.cluster.BootRKE2(ctx, n.hc, n.s.VaultAddr(), b, n.addr[a.Node])
}

// runScript runs the node's user data in a fresh sandbox and starts what it installed.
func (n *nodes) runScript(ctx context.Context, node string, ud UserData) error {
	box, err := nodeemu.NewSandbox(filepath.Join(n.sandboxes, node, strconv.Itoa(len(n.addr))))
	if err != nil {
		return err
	}
	run, err := box.CloudInit(ctx, ud.Bytes())
	if err != nil {
		return err
	}
	if run.Exists("/etc/vault/secret-id") {
		return fmt.Errorf("%s: the script left the spent secret id", node)
	}
	in, err := run.Installed()
	if err != nil {
		return err
	}
	if in.NodeName != node || !in.RegistryConfig || !strings.Contains(in.Registries, "registry.example.com:5000") {
		return fmt.Errorf("%s: installed %s, registries %q", node, in.NodeName, in.Registries)
	}
	return n.cluster.StartRKE2(n.hc, in, n.addr[node])
}
