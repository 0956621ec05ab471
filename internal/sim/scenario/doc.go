// Package scenario seeds a Waldur simulator with a small, realistic world — a provider
// organisation with an offering and its components, a customer project with a team and offering
// users — and writes the matching agent configuration. The demo, the end-to-end tests and the
// benchmarks all start from it, so they exercise the same shapes.
package scenario
