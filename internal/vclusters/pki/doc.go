// Package pki keeps the virtual-clusters tool's certificate authorities: one for the per-cluster
// API proxies (its certificate is the caCert the tunnels report to Rancher) and one for a main
// API server the tool starts itself. A CA is created once (ECDSA P-256, ten years) and kept in
// the state directory with its key readable by the owner only; serving certificates are issued
// at every start for the loopback addresses.
//
// It must not know about clusters, Rancher or Kubernetes objects.
package pki
