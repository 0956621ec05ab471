// Package vaultsim is a strict, stateful simulator of the part of HashiCorp Vault's HTTP API
// that site-agent uses for node bootstrap and secrets: ACL policies (sys/policies/acl and the
// older sys/policy), the AppRole auth method (roles, role ids, secret ids with use counts and
// TTLs, login), tokens with policies, use counts and TTLs (lookup-self), a KV version 2 engine
// (data and metadata paths) and the mount lookups the vault client makes
// (sys/internal/ui/mounts, sys/auth) and the token's own capabilities (sys/capabilities-self).
//
// Like Vault it requires X-Vault-Token on everything but login, enforces the token's policies
// (path globs ending in "*", capabilities create, read, update, delete, list; the root token may
// do anything), answers errors as {"errors": [...]}, refuses a secret id once its uses are spent
// or its TTL has passed, and counts a token's uses. It is stricter than Vault where that
// catches bugs: unknown paths are 404, unknown body fields and non-JSON policies 400.
//
// Faults (simfault: 500 and 429 as Vault's JSON errors, 502 and 503 as proxy pages,
// connection resets, and lost responses after the request was applied) are injected per
// operation name, deterministically from a seed.
//
// It is test and demo support: product code must not import it.
package vaultsim
