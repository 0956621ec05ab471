package vclusters

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// The built program (cmd/site-agent-vclusters), for tests that crash it or measure its memory.

var built struct {
	once sync.Once
	path string
	err  error
}

func vclustersBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "vclusters-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "site-agent-vclusters")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/waldur/site-agent/cmd/site-agent-vclusters").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// kubeconfigFor writes a kubeconfig for the shared API server.
func kubeconfigFor(t testing.TB, env *kubeenv.Env) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["main"] = &clientcmdapi.Cluster{Server: env.Host, CertificateAuthorityData: env.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: env.Token}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "main", AuthInfo: "admin"}
	cfg.CurrentContext = "main"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// process is a running `site-agent-vclusters`.
type process struct {
	cmd  *exec.Cmd
	api  string
	done chan struct{}
	out  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startBinary runs the tool with the configuration file and waits until its API answers.
func startBinary(t testing.TB, configFile, rancherToken string, port int) *process {
	t.Helper()
	p := &process{api: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{}), out: &lockedBuffer{}}
	p.cmd = exec.Command(vclustersBinary(t), "-c", configFile, "--listen", "127.0.0.1:"+strconv.Itoa(port))
	p.cmd.Env = append(os.Environ(), "SITE_AGENT_VC_RANCHER_TOKEN="+rancherToken)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(p.api + "/healthz"); err == nil {
			resp.Body.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("virtual-clusters exited: %s", p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("virtual-clusters API did not come up: %s", p.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown code runs, as in a crash.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *process) call(t testing.TB, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, p.api+path, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// rssBytes is the process's resident set size from /proc.
func (p *process) rssBytes() int64 { return kubeenv.RSSBytes(p.cmd.Process.Pid) }

// binaryConfig writes a configuration file for the binary.
func binaryConfig(t testing.TB, stateDir, kubeconfig, rancherURL string, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "virtual-clusters.yaml")
	if !strings.Contains(extra, "tunnel:") {
		extra += "tunnel:\n  backoff_min: 100ms\n  backoff_max: 2s\n"
	}
	if !strings.Contains(extra, "kwok:") {
		extra += "kwok:\n  mode: external\n" // the shared KWOK (kwok_env_test.go)
	}
	content := fmt.Sprintf(`state_dir: %s
log_level: info
main_api:
  kubeconfig: %s
rancher:
  url: %s
  insecure: true
proxy:
  port_base: 0
%s`, stateDir, kubeconfig, rancherURL, extra)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeTo(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// apiHost reads the API server's address from a started control plane's ports.json.
func apiHost(t testing.TB, path string) string {
	t.Helper()
	var p struct {
		APIServer int `json:"apiServer"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &p); err != nil || p.APIServer == 0 {
		t.Errorf("ports.json: %v", err)
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(p.APIServer)
}
