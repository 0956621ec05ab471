// Package vault connects site-agent to HashiCorp Vault: it resolves configuration references
// (vault:<mount>/<path>#<key>) and keeps secrets (Store) on a KV secrets engine
// (version 1 or 2, detected per mount the way the vault CLI does, through
// sys/internal/ui/mounts/<path>).
//
// Admin (admin.go) adds what a backend needs to hand out bootstrap credentials with an
// operator token: ACL policies, AppRoles, role ids and fresh secret ids, and the auth mount list;
// kvcas.go adds versioned reads and check-and-set writes on KV v2 (a value created exactly once).
//
// Both are built from the configuration's top-level `vault` section:
//
//	vault:
//	  address: https://vault.example.com:8200   # required (or VAULT_ADDR)
//	  ca_cert: /etc/ssl/certs/vault-ca.pem       # optional PEM bundle
//	  tls_skip_verify: false                     # optional, for tests only
//	  namespace: ""                              # Vault Enterprise, optional (or VAULT_NAMESPACE)
//	  timeout: 30s                               # optional, per request
//	  max_retries: 3                             # optional, retries on 5xx, 429 and network errors
//	  backoff_min: 250ms                         # optional, first wait between retries
//	  backoff_max: 2s                            # optional, cap of the wait
//	  auth:
//	    method: token | approle | kubernetes
//	    token: …            # token method (or VAULT_TOKEN)
//	    role_id: …          # approle
//	    secret_id: …        # approle, or secret_id_file: /etc/site-agent/secret-id
//	    mount: approle      # approle / kubernetes auth mount (defaults approle / kubernetes)
//	    role: site-agent    # kubernetes
//	    jwt_file: /var/run/secrets/kubernetes.io/serviceaccount/token   # kubernetes (default)
//
// The top-level upstreams.vault section (timeout, retries, backoff_min, backoff_max) fills in
// whichever of these four the vault section leaves out; the configuration loader merges it.
//
// References need "read" on the secret (KV v2: <mount>/data/<path>). The store needs "create",
// "update" and "read" there and, to delete every version on KV v2, "delete" on
// <mount>/metadata/<path>.
//
// Tokens obtained by AppRole or Kubernetes login have a TTL: before each request the session
// renews its token once two thirds of the TTL have passed and logs in again when renewal is
// refused or the token nears its maximum TTL; a request answered 403 is retried once after a
// fresh login. Errors say which path or reference failed and why and never contain a token or
// secret value; 5xx, 429 and network failures are marked transient (failure.IsTransient).
//
// It imports only Vault's client library (hashicorp/vault/api and its auth modules), never the
// Vault server, and makes no network call until the first Resolve or store operation. Like
// every client it takes plain values (the section as a map, secret.Secret) and imports neither
// the configuration loader nor the backends: internal/agent adapts Resolver to config.Resolver
// and Store to backends.SecretStore.
package vault
