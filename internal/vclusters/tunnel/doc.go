// Package tunnel keeps a virtual cluster's remotedialer sessions to Rancher open, the way
// Rancher's own agents open them (github.com/rancher/remotedialer v0.6.1):
//
//   - the cluster agent session, as cmd/agent/main.go of rancher/rancher opens it: a websocket to
//     wss://<server>/v3/connect/register until the first success, wss://<server>/v3/connect after
//     that, with the headers X-API-Tunnel-Token (the registration token from the
//     cattle-credentials Secret) and X-API-Tunnel-Params (base64 of the JSON
//     {"cluster":{"address","token","caCert"}}; caCert is itself base64 of a PEM bundle), built
//     as pkg/agent/cluster/cluster.go's Params does;
//   - the steve aggregation session, as rancher/steve pkg/aggregation opens it from the
//     stv-aggregation Secret that pkg/agent/rancher/rancher.go writes: a websocket to
//     wss://<server>/v3/connect with "Authorization: Bearer stv-cluster-<registration token>".
//     Rancher dials 127.0.0.1:6080 through it (pkg/api/steve/proxy/proxy.go); here that address
//     is answered in memory by the cluster's API proxy.
//
// The steve session accepts any TCP address, as the agent's does (its dialer stays in memory:
// Rancher dials 127.0.0.1:6080 and, to check the agent, not-used:80); unlike the real agent,
// whose allow function accepts any TCP address, the agent session accepts only its own
// cluster's proxy address. Pings and connection syncs are remotedialer's own
// (PingWriteInterval, SyncConnectionsInterval). remotedialer v0.6.1's data race on a closing
// connection is kept out of the paths this package controls (drain.go), so its tests run under
// -race.
// A dropped session is reopened after a jittered exponential backoff; handshakes of all clusters
// pass one Throttle, so a Rancher restart does not meet a thundering herd.
//
// It must not know about namespaces, Nodes or the state file: the caller supplies parameters,
// dialers and callbacks.
package tunnel
