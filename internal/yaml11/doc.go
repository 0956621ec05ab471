// Package yaml11 reads a configuration value where the schema expects a boolean the way the
// incumbent read its file: PyYAML (YAML 1.1) turns yes/no/on/off into booleans, and pydantic's
// lax mode accepts y/n, t/f, 1/0 and any letter case on top. The agent's YAML parser follows
// YAML 1.2, where those are strings; every reader of a boolean setting (internal/config, the
// backends' settings decoder, the Vault section) asks Bool instead, so an unchanged incumbent
// file reads the same and a string setting holding "yes" stays "yes".
//
// It is a leaf (standard library only) so that the configuration, the backends and the clients
// can share it.
package yaml11
