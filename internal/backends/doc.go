// Package backends defines what site-agent asks of a backend: the domain types (resources,
// members, quantities, usage), small role interfaces (provisioning, membership, usage and optional
// extras found by type assertion) and the registry
// that maps a configured backend name to its constructor.
//
// It must not import Waldur types or any particular backend: modes translate Waldur objects into
// these types, and backends never see Waldur. Error classification (transient, user-facing,
// not found) lives in the leaf package internal/failure, which both sides import.
package backends
