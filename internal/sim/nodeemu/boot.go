package nodeemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Boot is what a node's user data tells it to do.
type Boot struct {
	NodeName  string
	Role      string // server or agent
	Mode      string // rancher or rke2
	ServerURL string // rke2: https://<server>:9345 for joining nodes, "" for the initial server
	// RancherURL is the system-agent's --server (bootstrap rancher).
	RancherURL string
	Labels     map[string]string

	roleID, secretID     string
	loginPath, tokenPath string // /v1/… paths on Vault
}

const scriptPath = "/usr/local/sbin/site-agent-node-bootstrap"

var (
	loginRe    = regexp.MustCompile(`"\$VAULT_ADDR(/v1/auth/[A-Za-z0-9_/-]+/login)"`)
	tokenRe    = regexp.MustCompile(`"\$VAULT_ADDR(/v1/[A-Za-z0-9_/.-]+/data/[A-Za-z0-9_/.-]+)"`)
	nameRe     = regexp.MustCompile(`(?:--node-name|printf 'node-name: %s\\n') '([^']+)'`)
	serverRe   = regexp.MustCompile(`printf 'server: %s\\n' '([^']+)'`)
	labelRe    = regexp.MustCompile(`(?:--label|printf '  - "%s"\\n') '([^'=]+)=([^']*)'`)
	rke2TypeRe = regexp.MustCompile(`INSTALL_RKE2_TYPE=(server|agent)`)
	rancherRe  = regexp.MustCompile(`--server '([^']+)'`)
)

// Parse reads the built-in template's user data.
func Parse(userData []byte) (Boot, error) {
	var doc struct {
		WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
	}
	if err := yaml.Unmarshal(userData, &doc); err != nil {
		return Boot{}, fmt.Errorf("user data is not cloud-config YAML: %w", err)
	}
	files := map[string]string{}
	for _, f := range doc.WriteFiles {
		files[f.Path] = f.Content
	}
	script := files[scriptPath]
	b := Boot{roleID: files["/etc/vault/role-id"], secretID: files["/etc/vault/secret-id"], Labels: map[string]string{}}
	login, token, name := loginRe.FindStringSubmatch(script), tokenRe.FindStringSubmatch(script), nameRe.FindStringSubmatch(script)
	if script == "" || b.roleID == "" || b.secretID == "" || login == nil || token == nil || name == nil {
		return Boot{}, fmt.Errorf("user data lacks the bootstrap script, the Vault credentials or the node name")
	}
	b.loginPath, b.tokenPath, b.NodeName = login[1], token[1], name[1]
	for _, m := range labelRe.FindAllStringSubmatch(script, -1) {
		b.Labels[m[1]] = m[2]
	}
	switch t := rke2TypeRe.FindStringSubmatch(script); {
	case t != nil:
		b.Mode, b.Role = "rke2", t[1]
		if s := serverRe.FindStringSubmatch(script); s != nil {
			b.ServerURL = s[1]
		}
	case strings.Contains(script, "system-agent-install.sh"):
		b.Mode, b.Role = "rancher", "agent"
		if m := rancherRe.FindStringSubmatch(script); m != nil {
			b.RancherURL = m[1]
		}
		if strings.Contains(script, "--etcd --controlplane") {
			b.Role = "server"
		}
	default:
		return Boot{}, fmt.Errorf("user data installs neither RKE2 nor the Rancher system agent")
	}
	return b, nil
}

// Token logs in to Vault with the node's role id and secret id and reads the cluster token, as
// the bootstrap script does with curl.
func (b Boot) Token(ctx context.Context, hc *http.Client, vaultAddr string) (string, error) {
	body, _ := json.Marshal(map[string]string{"role_id": b.roleID, "secret_id": b.secretID})
	var login struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	if err := do(ctx, hc, http.MethodPost, vaultAddr+b.loginPath, "", body, &login); err != nil {
		return "", fmt.Errorf("%s: vault login: %w", b.NodeName, err)
	}
	var kv struct {
		Data struct {
			Data map[string]string `json:"data"`
		} `json:"data"`
	}
	if err := do(ctx, hc, http.MethodGet, vaultAddr+b.tokenPath, login.Auth.ClientToken, nil, &kv); err != nil {
		return "", fmt.Errorf("%s: reading the token: %w", b.NodeName, err)
	}
	if kv.Data.Data["token"] == "" {
		return "", fmt.Errorf("%s: no token at %s", b.NodeName, b.tokenPath)
	}
	return kv.Data.Data["token"], nil
}

// curlRetries and curlRetryDelay play the script's `curl --retry 10 --retry-delay 5
// --retry-all-errors`: each request is repeated on any failure (the delay scaled down), so a
// 5xx on the token read retries the read with the same login token rather than logging in
// again with a secret id that is already spent.
const (
	curlRetries    = 10
	curlRetryDelay = 20 * time.Millisecond
)

func do(ctx context.Context, hc *http.Client, method, url, token string, body []byte, out any) error {
	var err error
	for i := 0; i <= curlRetries; i++ {
		if err = doOnce(ctx, hc, method, url, token, body, out); err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(curlRetryDelay)
	}
	return err
}

func doOnce(ctx context.Context, hc *http.Client, method, url, token string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
