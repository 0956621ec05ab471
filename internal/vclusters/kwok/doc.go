// Package kwok runs KWOK (sigs.k8s.io/kwok) as the kubelet stand-in of the virtual clusters' main
// API server: a controller process that manages the Nodes annotated kwok.x-k8s.io/node=fake —
// it initializes their status, renews their Leases and refreshes their heartbeats — and the Pods
// bound to them, which go Running with IPs and are finished when deleted, through KWOK's own
// stage files (stages/, copied from the module with their source named in stages/SOURCE.md)
// with the delays the configuration sets.
// A Node whose Lease another holder has taken is left alone: KWOK neither renews the Lease nor
// touches the Node or its Pods (its controller treats them as read-only), which is how the tool
// makes Nodes stop heartbeating (chaos).
//
// It knows nothing of Rancher, tunnels or the state file; the binary comes from
// scripts/kwok/build.sh (the module proxy, cached by version).
package kwok
