package rancherenv

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/testenv"
)

// DefaultStateDir is where scripts/rancher/up.sh keeps its state (SITE_AGENT_RANCHER_STATE
// overrides it).
const DefaultStateDir = "/var/tmp/site-agent-rancher"

// EnvDisabled set to 0 leaves the real Rancher out: no source, or not running in this step.
const EnvDisabled = "SITE_AGENT_RANCHER"

// Env is the loopback Rancher started by up.sh.
type Env struct {
	URL         string // https://127.0.0.1:PORT (self-signed: verify_cert false)
	AdminToken  string // the admin's login token ("token-xxxxx:secret")
	Kubeconfig  string // the admin kubeconfig of Rancher's own kube-apiserver (the `local` cluster)
	KubeURL     string
	KubeCA      string // path of the kube-apiserver's CA
	KubeVersion string // v1.33.1
	State       string
}

// EnvFile is the env file up.sh writes.
func EnvFile() string {
	dir := os.Getenv("SITE_AGENT_RANCHER_STATE")
	if dir == "" {
		dir = DefaultStateDir
	}
	return filepath.Join(dir, "env")
}

// Load reads the env file. Outside the real-server tier it skips; a missing server skips too,
// unless SITE_AGENT_REQUIRE_REAL=1, which makes it a failure (but SITE_AGENT_RANCHER=0, set
// when no Rancher source exists here, always skips).
func Load(t testing.TB) *Env {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip("rancherenv: " + err.Error())
	}
	if os.Getenv(EnvDisabled) == "0" {
		t.Skip("rancherenv: the real Rancher is left out (" + EnvDisabled + "=0: scripts/test-real.sh sets it outside its Rancher step, or when scripts/rancher/build.sh found no source)")
	}
	e, err := LoadFile(EnvFile())
	if errors.Is(err, fs.ErrNotExist) {
		msg := "no Rancher at " + EnvFile() + ": run scripts/rancher/up.sh first"
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// LoadFile parses an env file of `export KEY=VALUE` lines.
func LoadFile(path string) (*Env, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e := &Env{}
	var tokenFile string
	fields := map[string]*string{"RANCHER_URL": &e.URL, "RANCHER_ADMIN_TOKEN_FILE": &tokenFile,
		"RANCHER_KUBECONFIG": &e.Kubeconfig, "RANCHER_KUBE_URL": &e.KubeURL, "RANCHER_KUBE_CA": &e.KubeCA,
		"RANCHER_KUBE_VERSION": &e.KubeVersion, "RANCHER_STATE": &e.State}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export "), "=")
		if dst := fields[k]; ok && dst != nil {
			*dst = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for k, dst := range fields {
		if *dst == "" && k != "RANCHER_KUBE_VERSION" {
			return nil, fmt.Errorf("%s: %s missing", path, k)
		}
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("%s: admin token: %w", path, err)
	}
	e.AdminToken = strings.TrimSpace(string(tok))
	return e, nil
}
