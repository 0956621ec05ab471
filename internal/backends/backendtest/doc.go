// Package backendtest is the conformance suite every backend passes: idempotent create that
// adopts its own object and refuses another resource's name, lookup, limits, delete of missing
// objects, membership add/remove idempotency, usage keys, and paused/restored status. Backends
// call Run from their own tests with a factory that builds the backend against its simulator or
// real server.
package backendtest
