// Package rancherv1 is the Rancher side of the rke2 backend (rke2.Rancher): clusters through
// the v1 provisioning API (provisioning.cattle.io clusters in fleet-default — an RKE2 custom
// cluster, or, with no rkeConfig, an imported one), and their registration tokens, nodes
// (labels, drain, deletion), capacity and cluster role template bindings through the v3 API.
//
// Requests carry the API key and go through the retrying transport of internal/upstream;
// POSTs are retried only when they cannot have been applied, and every create looks for the
// object first, so a repeated call finds what an earlier one made. It knows nothing of Waldur.
package rancherv1
