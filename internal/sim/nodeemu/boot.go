package nodeemu

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
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
	// ImportManifest: the script puts Rancher's import manifest (URL from Vault) into RKE2's
	// auto-deploy directory (bootstrap rke2 servers).
	ImportManifest bool
	// RegistryConfig: the script writes registries.yaml from Vault (bootstrap rke2).
	RegistryConfig bool
	// EtcdS3Config: the script writes the etcd-s3-* options from Vault into config.yaml.d
	// (bootstrap rke2 servers with etcd snapshots to S3).
	EtcdS3Config bool
	// Version is the RKE2 release the script installs (INSTALL_RKE2_VERSION; bootstrap rke2).
	Version string

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
	importRe   = regexp.MustCompile(`-K - \\\s+-o '[^']*/server/manifests/[^'/]+\.yaml'`)
	registryRe = regexp.MustCompile(`base64 -d > /etc/rancher/rke2/registries\.yaml`)
	etcdS3Re   = regexp.MustCompile(`base64 -d > /etc/rancher/rke2/config\.yaml\.d/[^ ]+\.yaml`)
	versionRe  = regexp.MustCompile(`INSTALL_RKE2_VERSION='([^']+)'`)
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
		b.ImportManifest, b.RegistryConfig = importRe.MatchString(script), registryRe.MatchString(script)
		b.EtcdS3Config = etcdS3Re.MatchString(script)
		if v := versionRe.FindStringSubmatch(script); v != nil {
			b.Version = v[1]
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

// Secrets is what a node reads from its cluster's Vault secret.
type Secrets struct {
	Token      string // registration token (rancher) or join token (rke2)
	ImportURL  string // Rancher's import manifest URL (rke2 servers)
	Registries string // registries.yaml, decoded (rke2 with a private registry)
	EtcdS3     string // the etcd-s3-* configuration, decoded (rke2 servers with etcd_s3)
}

// Token logs in to Vault with the node's role id and secret id and reads the cluster token, as
// the bootstrap script does with curl.
func (b Boot) Token(ctx context.Context, hc *http.Client, vaultAddr string) (string, error) {
	s, err := b.Read(ctx, hc, vaultAddr)
	return s.Token, err
}

// Read logs in to Vault once and reads the cluster's secret, failing where the script would
// (no token; a server without the import URL; a missing or undecodable registries.yaml).
func (b Boot) Read(ctx context.Context, hc *http.Client, vaultAddr string) (Secrets, error) {
	body, _ := json.Marshal(map[string]string{"role_id": b.roleID, "secret_id": b.secretID})
	var login struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	if err := do(ctx, hc, http.MethodPost, vaultAddr+b.loginPath, "", body, &login); err != nil {
		return Secrets{}, fmt.Errorf("%s: vault login: %w", b.NodeName, err)
	}
	var kv struct {
		Data struct {
			Data map[string]string `json:"data"`
		} `json:"data"`
	}
	if err := do(ctx, hc, http.MethodGet, vaultAddr+b.tokenPath, login.Auth.ClientToken, nil, &kv); err != nil {
		return Secrets{}, fmt.Errorf("%s: reading the token: %w", b.NodeName, err)
	}
	return b.secrets(kv.Data.Data)
}

func (b Boot) secrets(data map[string]string) (Secrets, error) {
	s := Secrets{Token: data["token"], ImportURL: data["import_url"]}
	switch {
	case s.Token == "":
		return s, fmt.Errorf("%s: no token at %s", b.NodeName, b.tokenPath)
	case b.ImportManifest && s.ImportURL == "":
		return s, fmt.Errorf("%s: no import_url at %s", b.NodeName, b.tokenPath)
	}
	if b.RegistryConfig {
		raw, ok := yamlValue(data["registries_yaml_b64"])
		if !ok {
			return s, fmt.Errorf("%s: no registries.yaml (registries_yaml_b64) at %s", b.NodeName, b.tokenPath)
		}
		s.Registries = raw
	}
	if b.EtcdS3Config {
		raw, ok := yamlValue(data["etcd_s3_yaml_b64"])
		if !ok {
			return s, fmt.Errorf("%s: no etcd S3 configuration (etcd_s3_yaml_b64) at %s", b.NodeName, b.tokenPath)
		}
		s.EtcdS3 = raw
	}
	return s, nil
}

// yamlValue decodes a base64 YAML document as the script's base64 -d would, and checks it is YAML.
func yamlValue(b64 string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	var doc map[string]any
	if err != nil || len(raw) == 0 || yaml.Unmarshal(raw, &doc) != nil {
		return "", false
	}
	return string(raw), true
}

// do sends one request as the script's curl -f --retry 10 --retry-all-errors does: any failure
// is tried again (a spent secret id stays refused).
func do(ctx context.Context, hc *http.Client, method, url, token string, body []byte, out any) error {
	var err error
	for attempt := range curlRetries + 1 {
		if attempt > 0 {
			time.Sleep(curlRetryDelay)
		}
		if err = doOnce(ctx, hc, method, url, token, body, out); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// curlRetries and curlRetryDelay: the script's --retry 10 (its --retry-delay 5 shortened).
const (
	curlRetries    = 10
	curlRetryDelay = 10 * time.Millisecond
)

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
