// Package vaulttest tests site-agent's Vault integration (internal/clients/vault, config
// references, the built binary) against a real Vault core started in-process with
// vault.NewTestCluster. It is a separate module so the product never links Vault's server code
// (BUSL-1.1); it holds tests only and must not be imported.
package vaulttest
