package vclusters

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// The tool starts its own main API server from the kube-apiserver, etcd and
// kube-controller-manager binaries it is pointed at, runs a cluster on it, and stops it all on
// SIGTERM.
func TestRealBinaryStartsItsOwnMainAPI(t *testing.T) {
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	bin, ok := kubeenv.BinDir()
	etcd, err := exec.LookPath("etcd")
	if !ok || err != nil {
		t.Fatalf("binaries missing in %s or etcd not in PATH: run scripts/kube/build.sh", bin)
	}
	sim, srv := rancherSim(t)
	stateDir := t.TempDir()
	cfg := binaryConfig(t, stateDir, "", srv.URL, "")
	cfg = rewrite(t, cfg, "  kubeconfig: \n", "  start:\n    kube_apiserver: "+filepath.Join(bin, "kube-apiserver")+
		"\n    etcd: "+etcd+"\n    kube_controller_manager: "+filepath.Join(bin, "kube-controller-manager")+"\n    etcd_unsafe_no_fsync: true\n")
	p := startBinary(t, cfg, sim.Token(), freePort(t))
	if code, body := p.call(t, "POST", "/clusters", `{"name":"own"}`); code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	waitForLong(t, 60*time.Second, "the cluster to connect", func() bool {
		_, body := p.call(t, "GET", "/clusters/own", "")
		info, _ := sim.ClusterByName("own")
		return body["status"] == string(StatusConnected) && info.State == "active" && info.Capacity["cpu"] == "48"
	})
	if !strings.Contains(p.out.String(), `"event":"main api server started"`) {
		t.Errorf("no start line in:\n%s", p.out)
	}
	ports := filepath.Join(stateDir, "main-api", "ports.json")
	if code, _ := p.call(t, "DELETE", "/clusters/own", ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("no exit 20 s after SIGTERM:\n%s", p.out)
	}
	if p.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit code %d:\n%s", p.cmd.ProcessState.ExitCode(), p.out)
	}
	if host := apiHost(t, ports); host != "" {
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			t.Errorf("the main API server at %s outlived the tool", host)
		}
	}
}

func rewrite(t *testing.T, path, old, new string) string {
	t.Helper()
	data := readFile(t, path)
	if !strings.Contains(data, old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	writeTo(t, path, strings.Replace(data, old, new, 1))
	return path
}
