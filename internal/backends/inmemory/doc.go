// Package inmemory is a real, selectable backend (`inmemory`) for demos, tests and dry runs of
// a site's Waldur setup: it keeps resources, limits, members and paused/downscaled flags in
// memory, optionally persisted to a JSON state file shared safely between agent processes
// (one per mode) through a file lock. It reports deterministic usage, keeps an operation log,
// and can inject faults and latency.
//
// It must behave like a careful real backend: idempotent creates that adopt their own objects,
// ErrDuplicate for names owned by another resource, deletes that tolerate missing objects.
package inmemory
