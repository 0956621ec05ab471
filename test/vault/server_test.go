package vaulttest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"
)

// TestVaultServerProgram: the vaultserver program (scripts/vault/server.sh builds it;
// $SITE_AGENT_VAULT_SERVER) prints its address, CA file and root token once KV v2 at secret/
// takes writes and AppRole is enabled; a node does what its bootstrap script does — AppRole
// login with a single-use secret id, then a KV v2 read — over plain HTTPS trusting the printed
// CA; the secret id logs in only once; closing its stdin stops it.
func TestVaultServerProgram(t *testing.T) {
	bin := os.Getenv("SITE_AGENT_VAULT_SERVER")
	if bin == "" {
		if os.Getenv("SITE_AGENT_REQUIRE_REAL") == "1" {
			t.Fatal("SITE_AGENT_VAULT_SERVER is not set (scripts/vault/server.sh)")
		}
		t.Skip("SITE_AGENT_VAULT_SERVER is not set (scripts/vault/server.sh)")
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var info struct {
		Addr      string `json:"addr"`
		CAFile    string `json:"ca_file"`
		RootToken string `json:"root_token"`
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil || info.Addr == "" || info.RootToken == "" {
		t.Fatalf("info line %q: %v", line, err)
	}
	pem, err := os.ReadFile(info.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	root, err := api.NewClient(&api.Config{Address: info.Addr, HttpClient: trusting(pem)})
	if err != nil {
		t.Fatal(err)
	}
	root.SetToken(info.RootToken)
	if _, err := root.Logical().Write("secret/data/rancher/cluster-x", map[string]any{"data": map[string]any{"token": "join-token"}}); err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().PutPolicy("node", `path "secret/data/rancher/*" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Logical().Write("auth/approle/role/node", map[string]any{"token_policies": "node", "secret_id_num_uses": 1}); err != nil {
		t.Fatal(err)
	}
	rid, err := root.Logical().Read("auth/approle/role/node/role-id")
	if err != nil {
		t.Fatal(err)
	}
	sid, err := root.Logical().Write("auth/approle/role/node/secret-id", nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := trusting(pem)
	body := `{"role_id":"` + rid.Data["role_id"].(string) + `","secret_id":"` + sid.Data["secret_id"].(string) + `"}`
	code, login := send(t, hc, http.MethodPost, info.Addr+"/v1/auth/approle/login", "", body)
	var auth struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		}
	}
	if err := json.Unmarshal([]byte(login), &auth); code != http.StatusOK || err != nil {
		t.Fatalf("login: %d %s", code, login)
	}
	if code, kv := send(t, hc, http.MethodGet, info.Addr+"/v1/secret/data/rancher/cluster-x", auth.Auth.ClientToken, ""); code != http.StatusOK || !strings.Contains(kv, `"token":"join-token"`) {
		t.Fatalf("kv read: %d %s", code, kv)
	}
	if code, _ := send(t, hc, http.MethodPost, info.Addr+"/v1/auth/approle/login", "", body); code == http.StatusOK {
		t.Fatal("a single-use secret id logged in twice")
	}
	_ = stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after stdin closed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30 s after its stdin was closed")
	}
}

func trusting(pem []byte) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func send(t *testing.T, hc *http.Client, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
