// Package config loads the agent's YAML file — the incumbent waldur-site-agent format, key for
// key — with koanf (defaults ← file ← SITE_AGENT_* environment ← flags), validates it, and
// returns a typed Config in which every credential is a secret.Secret.
//
// The top-level `upstreams` section (per-upstream timeout, retries and backoff; also
// SITE_AGENT_UPSTREAMS_<NAME>_<KEY>) is read here into upstream.Settings; upstreams.vault is
// merged into the vault section, which the secret resolver reads. String values
// `credential:<name>` are systemd credentials, read from $CREDENTIALS_DIRECTORY/<name>
// (LoadCredential= in the unit) before vault: references are resolved.
//
// Invalid values are reported all at once, as Errors (one *Error per problem, each naming the
// offering and the key), before any network call. Booleans are read as the incumbent's PyYAML
// read them (yes/no, on/off: internal/yaml11) wherever a boolean is expected. Keys the incumbent accepted but site-agent does not implement, and unknown keys, are
// warnings. This package must not make network calls or know about particular backends beyond
// the shared component format.
package config
