package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// realParts are what an rke2World runs for real in tier 2 (SITE_AGENT_REAL_TESTS=1; tests,
// not benchmarks): each VM's bootstrap script runs with /bin/sh in a sandbox (nodeemu.Sandbox:
// real curl, sed, base64; the installers and systemctl are stand-ins), against a real Vault
// core (realVault); each server runs a real etcd member (nodeemu.EtcdProcs, Debian's etcd);
// every started node registers a Node and renews its Lease in a real kube-apiserver (kubeenv),
// which is the downstream API the Rancher simulator proxies /k8s/clusters/<id> to and sums the
// cluster's capacity from; RKE2's managed-etcd controller runs on those Nodes
// (nodeemu.MemberController).
type realParts struct {
	vault     *realVault
	kube      *kubeenv.Env
	kubelets  *nodeemu.Kubelets
	installer string // the RKE2 installer stand-in's URL (rke2_install_url)
	boxes     string // the VMs' sandboxes
	etcdBin   string
	etcdDir   string
}

// nodeGrace is how long a stopped kubelet's Node stays Ready (the node lifecycle controller's
// grace period, shortened).
const nodeGrace = 3 * time.Second

// realTier says whether t runs the real world: a test (not a benchmark) in tier 2, unless
// SITE_AGENT_RKE2_WORLD=sim (scripts/test-real.sh sets it when Kubernetes or Vault is left out).
func realTier(t testing.TB) bool {
	_, isTest := t.(*testing.T)
	return isTest && testenv.Gate() == nil && os.Getenv("SITE_AGENT_RKE2_WORLD") != "sim"
}

// newRealParts starts the real pieces (skipping, or failing with SITE_AGENT_REQUIRE_REAL=1,
// when one cannot run here).
func newRealParts(t testing.TB) *realParts {
	t.Helper()
	if err := nodeemu.SandboxAvailable(); err != nil {
		skipOrFailReal(t, err)
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		skipOrFailReal(t, err)
	}
	p := &realParts{vault: startRealVault(t), boxes: t.TempDir(), etcdBin: etcd, etcdDir: tmpfsDir(t)}
	p.kube = kubeenv.Start(t)
	p.kubelets = nodeemu.NewKubelets(p.kube.Clientset)
	t.Cleanup(p.kubelets.Close)
	inst := httptest.NewServer(nodeemu.ServeStandIn(nodeemu.RKE2Installer))
	t.Cleanup(inst.Close)
	p.installer = inst.URL + "/"
	return p
}

// tmpfsDir is a directory in /dev/shm when there is one (etcd's fsyncs), removed at cleanup.
func tmpfsDir(t testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "e2e-etcd-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func (p *realParts) downstream() *ranchersim.Upstream {
	return &ranchersim.Upstream{Host: p.kube.Host, Token: p.kube.Token, CAData: p.kube.CAData}
}

// newEtcd is a cluster's real etcd, stopped at cleanup.
func (p *realParts) newEtcd(t testing.TB) nodeemu.Etcd {
	e := nodeemu.NewEtcdProcs(p.etcdBin, p.etcdDir)
	t.Cleanup(e.Close)
	return e
}

// bootScript does what the VM's cloud-init does, for real: its user data runs once in a
// sandbox of its own; then what the script installed starts — RKE2 joins its cluster, or the
// system agent registers with Rancher — retried as RKE2's service and the system agent retry
// (a join through a server not up yet); the started node's kubelet registers its Node.
func (w *rke2World) bootScript(ctx context.Context, hc *http.Client, s cloudServer) error {
	box, err := nodeemu.NewSandbox(filepath.Join(w.real.boxes, s.ID))
	if err != nil {
		return err
	}
	run, err := box.CloudInit(ctx, []byte(s.UserData))
	if err != nil {
		return err
	}
	in, err := run.Installed()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err = w.startInstalled(ctx, hc, in, s); err == nil || attempt == 40 || ctx.Err() != nil || !w.exists(s.ID) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	m := w.cloud.machine(s)
	m.InternalIP = firstOr(s.FixedIPs, "")
	return w.real.kubelets.Register(ctx, in.Boot, m)
}

// startInstalled starts what the script installed. A system agent's node is active in Rancher
// once its plan ran — RKE2 installed, a server's etcd member joined — so the member joins first.
func (w *rke2World) startInstalled(ctx context.Context, hc *http.Client, in nodeemu.Installed, s cloudServer) error {
	if in.Mode == "rke2" {
		return w.rke2.start(hc, in, s)
	}
	if err := w.rke2.registered(in.Boot, s); err != nil {
		return err
	}
	return in.RegisterWithRancher(ctx, hc, in.Token)
}

// exists: the VM is still in the cloud.
func (w *rke2World) exists(id string) bool {
	for _, s := range w.cloud.servers() {
		if s.ID == id {
			return true
		}
	}
	return false
}

func firstOr(l []string, d string) string {
	if len(l) > 0 {
		return l[0]
	}
	return d
}

// realSettings are the backend settings the real world adds: the RKE2 installer stand-in.
func (p *realParts) settings() string {
	if p == nil {
		return ""
	}
	return "rke2_install_url: " + strings.TrimSpace(p.installer) + "\n"
}

// components are the backend components the real world adds: the capacity its Nodes report.
func (p *realParts) components() string {
	if p == nil {
		return ""
	}
	return `      cpu: {measured_unit: cores, unit_factor: 1, accounting_type: usage, label: "vCPU"}
      ram: {measured_unit: GiB, unit_factor: 1, accounting_type: usage, label: "RAM"}
`
}

// checkUsage (tier 2): one reporting cycle sends the cluster's usage, which the backend reads
// from Rancher's cluster capacity — summed by the Rancher simulator from the Nodes the
// kubelets registered in the kube-apiserver — and must equal the cluster's VMs: their count and
// their flavors' vCPUs and RAM, read from the cloud.
func (w *rke2World) checkUsage(t *testing.T, uuid string) {
	t.Helper()
	if w.real == nil {
		return
	}
	want := map[string]float64{}
	for _, s := range w.cloud.servers() {
		if strings.HasPrefix(s.Name, w.cluster+"-") && !s.Deleting {
			want["nodes"]++
			want["cpu"] += float64(s.VCPUs)
			want["ram"] += float64(s.RAMMB) / 1024
		}
	}
	w.once("report")
	got := map[string]float64{}
	for _, u := range w.sim.ComponentUsages(uuid) {
		got[u.Type] = u.Amount
	}
	for k, v := range want {
		if got[k] != v || v == 0 {
			t.Fatalf("usage %v, want %v (the VMs' flavors)", got, want)
		}
	}
	t.Logf("usage from the Nodes: %v", got)
}
