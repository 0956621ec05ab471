package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/testenv"
)

// worldVault is the Vault of an rke2World as the tests inspect it: the Vault simulator, or
// (tier 2) a real Vault core.
type worldVault interface {
	Policy(name string) bool
	Role(key string) bool              // "<approle mount>/<role>"
	Secret(path string) map[string]any // "<kv mount>/<path>": the KV v2 data, nil when absent
	SetFaults(c simfault.Config)
	FaultLog() []string
	TotalCalls() int
}

// realVault is test/vault's vaultserver program (a real Vault core: vault.NewTestCluster,
// KV v2 at secret/, AppRole at approle/), reached by the agent and the nodes' scripts through
// a reverse proxy that counts the requests and can answer some with faults, as the simulators
// do; the tests read it directly with the root token.
type realVault struct {
	t           testing.TB
	addr, token string
	direct      *http.Client // trusts the core's CA
	faults      *simfault.Injector

	mu    sync.Mutex
	calls int
}

// vaultServerBinary is $SITE_AGENT_VAULT_SERVER, else the newest vaultserver that
// scripts/vault/server.sh cached.
func vaultServerBinary() (string, error) {
	if p := os.Getenv("SITE_AGENT_VAULT_SERVER"); p != "" {
		return p, nil
	}
	cache := os.Getenv("SITE_AGENT_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "site-agent")
	}
	found, _ := filepath.Glob(filepath.Join(cache, "vault", "vaultserver-*"))
	sort.Slice(found, func(i, j int) bool { return modTime(found[i]).After(modTime(found[j])) })
	for _, f := range found {
		if filepath.Ext(f) != ".tmp" {
			return f, nil
		}
	}
	return "", errors.New("no vaultserver: run scripts/vault/server.sh or set SITE_AGENT_VAULT_SERVER")
}

func modTime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// startRealVault starts the vaultserver program for the test (stopped at cleanup).
func startRealVault(t testing.TB) *realVault {
	t.Helper()
	bin, err := vaultServerBinary()
	if err != nil {
		skipOrFailReal(t, err)
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	var info struct {
		Addr      string `json:"addr"`
		CAFile    string `json:"ca_file"`
		RootToken string `json:"root_token"`
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), &info) != nil {
		t.Fatalf("vaultserver: %q %v", line, err)
	}
	pem, err := os.ReadFile(info.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &realVault{t: t, addr: info.Addr, token: info.RootToken, direct: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		faults: simfault.New(simfault.Profile{})}
}

// skipOrFailReal skips a tier-2 test whose real server is missing, or fails it with
// SITE_AGENT_REQUIRE_REAL=1.
func skipOrFailReal(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(testenv.EnvRequireReal) == "1" {
		t.Fatal(err)
	}
	t.Skip(err)
}

// proxy is the handler the agent and the nodes reach the core through.
func (v *realVault) proxy() http.Handler {
	target, _ := url.Parse(v.addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = v.direct.Transport
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		v.calls++
		v.mu.Unlock()
		if k, ok := v.faults.Pick("vault " + r.Method); ok {
			simfault.Write(w, k, nil)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// read GETs a path of the core's API with the root token: the decoded body, or nil for 404.
func (v *realVault) read(path string) map[string]any {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, v.addr+"/v1/"+path, nil)
	req.Header.Set("X-Vault-Token", v.token)
	resp, err := v.direct.Do(req)
	if err != nil {
		v.t.Fatalf("vault %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var out map[string]any
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		v.t.Fatalf("vault %s: HTTP %d", path, resp.StatusCode)
	}
	return out
}

func (v *realVault) Policy(name string) bool { return v.read("sys/policies/acl/"+name) != nil }

func (v *realVault) Role(key string) bool {
	mount, role, _ := strings.Cut(key, "/")
	return v.read("auth/"+mount+"/role/"+role) != nil
}

func (v *realVault) Secret(path string) map[string]any {
	mount, rest, _ := strings.Cut(path, "/")
	out := v.read(mount + "/data/" + rest)
	data, _ := out["data"].(map[string]any)
	inner, _ := data["data"].(map[string]any)
	return inner
}

func (v *realVault) SetFaults(c simfault.Config) { v.faults.SetFaults(c) }
func (v *realVault) FaultLog() []string          { return v.faults.FaultLog() }

func (v *realVault) TotalCalls() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls
}
