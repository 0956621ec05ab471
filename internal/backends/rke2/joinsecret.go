package rke2

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"

	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// With bootstrap rke2 the cluster's KV secret lives as long as the cluster: it holds the RKE2
// join token, which every node of the cluster — the initial server, joining servers, agents,
// and a node added months later — must present. Only the policy and AppRole that let new VMs
// read it are removed once the nodes are ready (a scale-up writes them again); terminate removes
// the secret too. The secret's keys:
//
//	token                the join token: generated here once (crypto/rand) and never replaced
//	import_url           Rancher's import manifest URL (it embeds the registration token);
//	                     servers put the manifest into RKE2's auto-deploy directory
//	registries_yaml_b64  RKE2's registries.yaml with the private registry's credentials,
//	                     base64 (the node's script extracts values with sed)
//	etcd_s3_yaml_b64     the etcd-s3-* options with the S3 secret key, base64: servers write
//	                     them to /etc/rancher/rke2/config.yaml.d/50-etcd-s3.yaml

// Keys of the cluster's secret.
const (
	SecretKeyToken      = "token"
	SecretKeyImportURL  = "import_url"
	SecretKeyRegistries = "registries_yaml_b64"
	SecretKeyEtcdS3     = "etcd_s3_yaml_b64"
)

// JoinSecret is what bootstrap rke2 nodes read from the cluster's secret besides the join token.
type JoinSecret struct {
	ImportURL  secret.Secret // Rancher's import manifest URL, a credential
	Registries secret.Secret // registries.yaml ("" without a private registry)
	EtcdS3     secret.Secret // the etcd-s3-* configuration ("" without etcd_s3)
}

// importURLRe: the script hands the URL to curl inside a double-quoted config line.
var importURLRe = &lazyRegexp{pattern: `^https?://[^\s"\\]+$`}

// EnsureJoin (bootstrap rke2) writes the cluster's policy and AppRole and brings its secret up
// to date. The join token is created only when the secret does not exist and mayCreate is set
// (the initial server is being created): check-and-set (version 0) makes a create that is sent
// twice, or by two agents at once, fail the second time, so a cluster never gets two tokens.
// Without mayCreate a missing secret is a failure an operator must resolve: a fresh token would
// not let a node join the servers that hold the old one.
func (v *ClusterVault) EnsureJoin(ctx context.Context, cluster string, js JoinSecret, mayCreate bool) error {
	if !importURLRe.get().MatchString(js.ImportURL.Reveal()) {
		return fmt.Errorf("rancher's import manifest URL is not a plain http(s) URL")
	}
	if err := v.ensureAccess(ctx, cluster); err != nil {
		return err
	}
	path := v.secretPath(cluster)
	createRefused := false
	for range 3 {
		data, version, err := v.admin.GetVersioned(ctx, path)
		switch {
		case errors.Is(err, failure.ErrNotFound) && createRefused:
			return failure.Errorf("vault secret %s has versions but its latest one is deleted; undelete it "+
				"(vault kv undelete) so the cluster keeps its join token", path)
		case errors.Is(err, failure.ErrNotFound) && !mayCreate:
			return failure.Errorf("the cluster's RKE2 join token is missing from vault (%s, key %s) while the cluster has "+
				"servers; a new token would not let nodes join them. Put the token back (a server's <data-dir>/server/token)", path, SecretKeyToken)
		case errors.Is(err, failure.ErrNotFound):
			err = v.createJoinSecret(ctx, path, js)
			if !errors.Is(err, vault.ErrVersionMismatch) {
				return err
			}
			createRefused = true // created meanwhile, perhaps by this very write: read it
			continue
		case err != nil:
			return err
		}
		if data[SecretKeyToken] == "" {
			return failure.Errorf("vault secret %s has no %s; put the cluster's join token there", path, SecretKeyToken)
		}
		token := secret.New(data[SecretKeyToken])
		want := joinData(token, js)
		token.Forget()
		if maps.Equal(data, want) {
			return nil
		}
		if err := v.admin.PutCAS(ctx, path, want, version); !errors.Is(err, vault.ErrVersionMismatch) {
			return err
		}
	}
	return failure.Transient(fmt.Errorf("vault secret %s kept changing while it was updated", path))
}

// createJoinSecret writes the secret with a fresh join token, only if it does not exist.
func (v *ClusterVault) createJoinSecret(ctx context.Context, path string, js JoinSecret) error {
	token, err := newJoinToken()
	if err != nil {
		return err
	}
	defer token.Forget()
	return v.admin.PutCAS(ctx, path, joinData(token, js), 0)
}

// newJoinToken is 32 random bytes in hex: RKE2 takes any string as the cluster token.
func newJoinToken() (secret.Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return secret.Secret{}, fmt.Errorf("join token: %w", err)
	}
	return secret.New(hex.EncodeToString(b)), nil
}

func joinData(token secret.Secret, js JoinSecret) map[string]string {
	d := map[string]string{SecretKeyToken: token.Reveal(), SecretKeyImportURL: js.ImportURL.Reveal()}
	if !js.Registries.IsZero() {
		d[SecretKeyRegistries] = base64.StdEncoding.EncodeToString([]byte(js.Registries.Reveal()))
	}
	if !js.EtcdS3.IsZero() {
		d[SecretKeyEtcdS3] = base64.StdEncoding.EncodeToString([]byte(js.EtcdS3.Reveal()))
	}
	return d
}

// EtcdS3YAML renders the etcd-s3-* options of RKE2's server configuration for the settings'
// etcd_s3 block (docs.rke2.io, etcd snapshots: S3 compatible API support), the secret key
// among them: a configuration file of its own, delivered through Vault. Zero without etcd_s3.
func EtcdS3YAML(s *Settings) (secret.Secret, error) {
	s3 := s.EtcdS3
	if s3 == nil {
		return secret.Secret{}, nil
	}
	doc := map[string]any{"etcd-s3": true, "etcd-s3-bucket": s3.Bucket}
	for k, v := range map[string]string{"etcd-s3-endpoint": s3.Endpoint, "etcd-s3-folder": s3.Folder,
		"etcd-s3-region": s3.Region, "etcd-s3-access-key": s3.AccessKey, "etcd-s3-secret-key": s3.SecretKey.Reveal()} {
		if v != "" {
			doc[k] = v
		}
	}
	if s3.SkipSSLVerify {
		doc["etcd-s3-skip-ssl-verify"] = true
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return secret.Secret{}, fmt.Errorf("etcd s3 configuration: %w", err)
	}
	return secret.New(string(out)), nil
}

// RegistriesYAML renders RKE2's registries.yaml for the settings' private registry: docker.io
// mirrored to it and, with a user, its credentials. Zero without a private registry.
func RegistriesYAML(s *Settings) (secret.Secret, error) {
	if s.PrivateRegistryURL == "" {
		return secret.Secret{}, nil
	}
	u, err := url.Parse(s.PrivateRegistryURL)
	if err != nil || u.Host == "" {
		return secret.Secret{}, fmt.Errorf("backend_settings.private_registry_url: not a URL")
	}
	type auth struct {
		Username string `yaml:"username"`
		Password string `yaml:"password"`
	}
	type config struct {
		Auth *auth `yaml:"auth,omitempty"`
	}
	doc := struct {
		Mirrors map[string]map[string][]string `yaml:"mirrors"`
		Configs map[string]config              `yaml:"configs,omitempty"`
	}{Mirrors: map[string]map[string][]string{"docker.io": {"endpoint": {s.PrivateRegistryURL}}}}
	if s.PrivateRegistryUser != "" {
		doc.Configs = map[string]config{u.Host: {Auth: &auth{Username: s.PrivateRegistryUser, Password: s.PrivateRegistryPassword.Reveal()}}}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return secret.Secret{}, fmt.Errorf("registries.yaml: %w", err)
	}
	return secret.New(string(out)), nil
}
