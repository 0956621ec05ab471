// Package simhttp holds the HTTP plumbing the simulators share: a response writer that records the
// status for their request logs and call counters. Test-only: it lives in the simulator wing and the
// release binary never links it.
package simhttp
