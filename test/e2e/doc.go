// Package e2e holds black-box tests of the built site-agent binary: each test starts a
// contract-validating Waldur simulator on loopback, writes an incumbent-format configuration,
// runs the binary as a process and asserts Waldur's end state, the backend's state and
// operation log, and zero contract violations.
package e2e
