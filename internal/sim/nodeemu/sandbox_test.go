package nodeemu

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/testenv"
)

// newSandbox skips outside the real-server tier and where sandboxes cannot run (a failure with
// SITE_AGENT_REQUIRE_REAL=1).
func newSandbox(t *testing.T) *Sandbox {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	if err := SandboxAvailable(); err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	s, err := NewSandbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSandboxRunsCloudInit (tier 2): write_files land under the sandbox's root with their
// permissions; the runcmd script runs chrooted with the host's sh, curl and sed (an absolute
// path it writes is the sandbox's, /usr is read-only); an installer fetched over HTTP and
// systemctl are stand-ins that record their arguments (spaces and empty ones kept) and
// environment, in order; a failing command fails the run with its output.
func TestSandboxRunsCloudInit(t *testing.T) {
	s := newSandbox(t)
	installer := httptest.NewServer(ServeStandIn(RKE2Installer))
	defer installer.Close()
	ud := `#cloud-config
write_files:
  - path: /etc/demo/secret
    permissions: "0600"
    content: "s3cret"
  - path: /usr/local/sbin/boot
    permissions: "0700"
    content: |
      #!/bin/sh
      set -eu
      v=$(cat /etc/demo/secret | sed 's/3/e/')
      mkdir -p /etc/rancher/rke2
      printf 'token: %s\n' "$v" > /etc/rancher/rke2/config.yaml
      if touch /usr/bin/x 2>/dev/null; then echo "usr writable"; exit 1; fi
      curl -fsSL '` + installer.URL + `/' | INSTALL_RKE2_TYPE=agent sh -s - 'a b' ''
      systemctl enable --now rke2-agent.service
runcmd:
  - [/usr/local/sbin/boot]
  - echo done
`
	run, err := s.CloudInit(context.Background(), []byte(ud))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := run.Mode("/etc/demo/secret"); err != nil || m != 0o600 {
		t.Errorf("write_files mode %v %v", m, err)
	}
	if b, err := run.File("/etc/rancher/rke2/config.yaml"); err != nil || string(b) != "token: secret\n" {
		t.Errorf("config.yaml %q %v", b, err)
	}
	if _, err := os.Stat("/etc/demo/secret"); err == nil {
		t.Error("the script wrote the host's /etc")
	}
	if len(run.Calls) != 2 || run.Calls[0].Prog != RKE2Installer || run.Calls[1].Prog != "systemctl" {
		t.Fatalf("calls %+v", run.Calls)
	}
	if a := run.Calls[0].Args; len(a) != 2 || a[0] != "a b" || a[1] != "" || run.Calls[0].Env["INSTALL_RKE2_TYPE"] != "agent" {
		t.Errorf("installer call %+v", run.Calls[0])
	}
	if strings.Join(run.Calls[1].Args, " ") != "enable --now rke2-agent.service" || !strings.HasPrefix(run.Calls[1].Env["PATH"], "/usr/local/sbin:") {
		t.Errorf("systemctl call %+v", run.Calls[1])
	}
	if !strings.Contains(run.Output, "done") {
		t.Errorf("output %q", run.Output)
	}

	s2, err := NewSandbox(filepath.Join(t.TempDir(), "second"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s2.CloudInit(context.Background(), []byte("#cloud-config\nruncmd:\n  - [sh, -c, \"echo failing >&2; exit 3\"]\n"))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "failing") {
		t.Errorf("a failing runcmd: %v", err)
	}
}

// TestInstalledReadsTheInstall: what the stand-ins recorded and the files the script wrote make
// the node (both modes), and an install RKE2 would not start is refused.
func TestInstalledReadsTheInstall(t *testing.T) {
	root := t.TempDir()
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	agent := Call{Prog: SystemAgentInstaller, Env: map[string]string{"CATTLE_AGENT_VAR_DIR": "/opt/rke2_storage/agent"},
		Args: []string{"--server", "https://r.example", "--token", "tok", "--node-name", "n-server-0", "--label", "a=b", "--label", "cattle.io/os=linux", "--etcd", "--controlplane"}}
	in, err := (&Run{Calls: []Call{agent}}).Installed()
	if err != nil || in.Mode != "rancher" || in.Role != "server" || in.Token != "tok" || in.Labels["a"] != "b" || in.RancherURL != "https://r.example" {
		t.Fatalf("system agent: %+v %v", in, err)
	}
	agent.Args = append(agent.Args, "--worker")
	if _, err := (&Run{Calls: []Call{agent}}).Installed(); err == nil {
		t.Error("etcd, controlplane and worker at once accepted")
	}

	install := Call{Prog: RKE2Installer, Env: map[string]string{"INSTALL_RKE2_TYPE": "server", "INSTALL_RKE2_VERSION": "v1.31.7+rke2r1"}}
	systemctl := Call{Prog: "systemctl", Args: []string{"enable", "--now", "rke2-server.service"}}
	write(rke2Config, "token: \"jt\"\nserver: https://10.0.0.1:9345\nnode-name: n-server-1\ndata-dir: /d/rke2\nnode-label:\n  - \"k=v\"\n", 0o600)
	write("/d/rke2/server/manifests/rancher-import.yaml", "kind: List\n", 0o600)
	run := &Run{Calls: []Call{install, systemctl}, root: root}
	in, err = run.Installed()
	if err != nil || in.Mode != "rke2" || in.Token != "jt" || in.ServerURL != "https://10.0.0.1:9345" || in.Labels["k"] != "v" ||
		string(in.Manifest) != "kind: List\n" || in.RegistryConfig || in.Version != "v1.31.7+rke2r1" {
		t.Fatalf("rke2: %+v %v", in, err)
	}
	write("/etc/rancher/rke2/registries.yaml", "mirrors: {docker.io: {endpoint: [https://reg]}}\n", 0o644)
	if _, err := run.Installed(); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Errorf("a world-readable registries.yaml: %v", err)
	}
	systemctl.Args[2] = "rke2-agent.service"
	if _, err := (&Run{Calls: []Call{install, systemctl}, root: root}).Installed(); err == nil {
		t.Error("a server install started as rke2-agent accepted")
	}
	if _, err := (&Run{Calls: []Call{systemctl}, root: root}).Installed(); err == nil {
		t.Error("systemctl without an installer accepted")
	}
}
