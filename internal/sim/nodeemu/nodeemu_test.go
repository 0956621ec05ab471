package nodeemu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rke2 backend's golden cloud-init files are the contract this package reads.
func golden(t *testing.T, name string) Boot {
	t.Helper()
	ud, err := os.ReadFile(filepath.Join("..", "..", "backends", "rke2", "testdata", "cloudinit", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(ud)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestParseGoldenUserData(t *testing.T) {
	cases := []struct {
		file, name, role, mode, server string
		importManifest, registries     bool
	}{
		{"rancher-server-initial.yaml", "prod-server-0", "server", "rancher", "", false, false},
		{"rancher-agent.yaml", "prod-agent-1", "agent", "rancher", "", false, false},
		{"rke2-server-initial.yaml", "prod-server-0", "server", "rke2", "", true, false},
		{"rke2-server-joining.yaml", "prod-server-2", "server", "rke2", "https://10.0.0.11:9345", true, true},
		{"rke2-agent.yaml", "prod-agent-0", "agent", "rke2", "https://10.0.0.12:9345", false, false},
	}
	for _, tc := range cases {
		b := golden(t, tc.file)
		if b.NodeName != tc.name || b.Role != tc.role || b.Mode != tc.mode || b.ServerURL != tc.server ||
			b.ImportManifest != tc.importManifest || b.RegistryConfig != tc.registries {
			t.Errorf("%s: %+v", tc.file, b)
		}
		if b.Labels["rke2.site-agent.waldur.com/role"] != tc.role || b.roleID == "" || b.secretID == "" ||
			!strings.HasSuffix(b.loginPath, "/approle/login") || !strings.Contains(b.tokenPath, "/data/rancher/cluster-") {
			t.Errorf("%s: labels %v, vault %q %q", tc.file, b.Labels, b.loginPath, b.tokenPath)
		}
	}
	if _, err := Parse([]byte("#cloud-config\nhostname: x\n")); err == nil {
		t.Error("user data without a bootstrap script parsed")
	}
}

func TestClusterJoinRules(t *testing.T) {
	c := NewCluster("K10tok")
	initial := Boot{NodeName: "c-server-0", Role: "server"}
	joining := Boot{NodeName: "c-server-1", Role: "server", ServerURL: "https://10.0.0.1:9345"}
	agent := Boot{NodeName: "c-agent-0", Role: "agent", ServerURL: "https://10.0.0.2:9345"}
	steps := []struct {
		b     Boot
		token string
		addr  string
		want  string // "" = joins
	}{
		{joining, "K10tok", "10.0.0.2", "no live server"},
		{Boot{NodeName: "c-agent-9", Role: "agent"}, "K10tok", "10.0.0.9", "needs a server"},
		{initial, "wrong", "10.0.0.1", "refused the token"},
		{initial, "K10tok", "10.0.0.1", ""},
		{Boot{NodeName: "c-server-7", Role: "server"}, "K10tok", "10.0.0.7", "second cluster"},
		{Boot{NodeName: "c-server-8", Role: "server", ServerURL: "https://10.0.0.1:6443"}, "K10tok", "10.0.0.8", "supervisor URL"},
		{joining, "K10tok", "10.0.0.2", ""},
		{agent, "K10tok", "10.0.0.3", ""},
		{agent, "K10tok", "10.0.0.3", "already in the cluster"},
	}
	for i, s := range steps {
		err := c.Join(s.b, s.token, s.addr)
		if (s.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), s.want) || !errors.Is(err, ErrRefused))) {
			t.Fatalf("step %d (%s): %v, want %q", i, s.b.NodeName, err, s.want)
		}
	}
	c.Stop("c-server-0")
	if err := c.Join(Boot{NodeName: "c-agent-1", Role: "agent", ServerURL: "https://10.0.0.1:9345"}, "K10tok", "10.0.0.4"); err == nil {
		t.Error("joined through a stopped server")
	}
	if got := c.String(); got != "c-agent-0(agent), c-server-0(server), c-server-1(server)" {
		t.Errorf("members %s", got)
	}
}
