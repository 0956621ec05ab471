// Package backends defines what site-agent asks of a backend: the domain types (resources,
// members, quantities, usage), small role interfaces (provisioning, membership, usage and optional
// extras found by type assertion), the error vocabulary shared by all backends, and the registry
// that maps a configured backend name to its constructor.
//
// It must not import Waldur types or any particular backend: modes translate Waldur objects into
// these types, and backends never see Waldur.
package backends
