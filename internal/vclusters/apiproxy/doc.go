// Package apiproxy is a virtual cluster's in-process API proxy: an httputil.ReverseProxy on a
// reserved loopback port that passes every request through to the main API server, with the
// caller's own Authorization header (no credentials of its own) and without compression. It
// serves TLS with a certificate from the tool's CA, because Rancher always reaches an imported
// cluster at "https://" + the address the agent reports; the same handler also answers plain
// HTTP on an in-memory listener for the steve session (Rancher dials 127.0.0.1:6080 there).
//
// One change to the pass-through: list and watch requests of the collections in Selectors get
// a label selector added — the cluster's own Nodes, as Rancher's cluster totals need, and no
// tenant namespaces of the tool. Everything else — other namespaces, pods, quotas — is the
// shared main API.
//
// If the listener fails, the proxy restarts on a new port and reports the move, so the tunnels
// can tell Rancher the new address. Ports come from a Ports pool that reserves them by holding
// the listener, so two clusters never race for one port.
//
// It must not know about Rancher, tunnels or the state file.
package apiproxy
