package rke2

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
)

// TestRancherNodesBootScriptReal (tier 2): with bootstrap rancher, each rendered bootstrap
// script runs for real in a sandbox (nodeemu.Sandbox): it logs in to Vault with its single-use
// secret id, reads the cluster's registration token, and pipes Rancher's
// /system-agent-install.sh (a stand-in served by the Rancher simulator) into sh with the node's
// roles and labels; what the installer was given registers the node, which Rancher lists with
// its roles and labels. The script's secret id is spent: it logs in no more.
func TestRancherNodesBootScriptReal(t *testing.T) {
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	if err := nodeemu.SandboxAvailable(); err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	rs := ranchersim.New(ranchersim.Options{Seed: 4, NodeActiveAfter: time.Millisecond})
	rs.SetSystemAgentInstaller([]byte(nodeemu.StandIn(nodeemu.SystemAgentInstaller)))
	rsrv := httptest.NewServer(rs)
	t.Cleanup(rsrv.Close)
	s, _, hc := vaultWorld(t, "bootstrap", "rancher", "backend_url", rsrv.URL)
	spec := goldenSpec(t, s)
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	cid, regToken := provisionedRancherCluster(t, rsrv.URL, rs)
	if err := cv.Ensure(ctx, testCluster, secret.New(regToken)); err != nil {
		t.Fatal(err)
	}
	var last UserData
	for _, inv := range []Inventory{{Role: RoleServer, Initial: true}, {Role: RoleAgent, Index: 1}} {
		inv.Cluster, inv.Stage = testCluster, StageInstall
		name := NodeName(spec.Name, inv.Role, inv.Index)
		creds, err := cv.NodeCredentials(ctx, testCluster)
		if err != nil {
			t.Fatal(err)
		}
		ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, name, inv, creds, ""))
		creds.SecretID.Forget()
		if err != nil {
			t.Fatal(err)
		}
		last = ud
		in := runInSandbox(t, filepath.Join(t.TempDir(), name), ud)
		if in.Mode != "rancher" || in.NodeName != name || in.Role != inv.Role.String() || in.Token != regToken ||
			in.RancherURL != rsrv.URL || in.Labels[LabelCluster] != testCluster || in.Labels["cattle.io/os"] != "linux" {
			t.Fatalf("%s installed %+v", name, in.Boot)
		}
		if err := in.RegisterWithRancher(ctx, hc, in.Token); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	got := map[string]string{}
	for _, n := range rs.Nodes() {
		if n.ClusterID == cid {
			got[n.Name] = n.State + " " + n.Labels[LabelRole]
		}
	}
	if len(got) != 2 || got["prod-server-0"] != "active server" || got["prod-agent-1"] != "active agent" {
		t.Fatalf("rancher nodes %v", got)
	}
	if _, err := bootToken(ctx, hc, s.VaultAddr(), last); err == nil || !strings.Contains(err.Error(), "login") {
		t.Fatalf("the script's secret id logged in again: %v", err)
	}
}

// runInSandbox runs user data in a fresh sandbox and reads what it installed.
func runInSandbox(t *testing.T, dir string, ud UserData) nodeemu.Installed {
	t.Helper()
	box, err := nodeemu.NewSandbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := box.CloudInit(context.Background(), ud.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if run.Exists("/etc/vault/secret-id") {
		t.Fatal("the script left the spent secret id")
	}
	in, err := run.Installed()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// provisionedRancherCluster creates a provisioning cluster with an rkeConfig (Rancher
// provisions it; machines register through the system agent) and its registration token; it
// returns the management id and the token.
func provisionedRancherCluster(t *testing.T, base string, rs *ranchersim.Server) (string, string) {
	t.Helper()
	cid, reg := rancherClusterSpec(t, base, rs.Token(), map[string]any{"kubernetesVersion": DefaultK8sVersion, "rkeConfig": map[string]any{}})
	return cid, reg.Token.Reveal()
}
