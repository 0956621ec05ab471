// Package pki keeps the virtual-clusters tool's certificate authorities: one for the per-cluster
// API proxies (its certificate is the caCert the tunnels report to Rancher), and for a main API
// server the tool starts itself one for the API server and one for its etcd (whose clients and
// peers must show a certificate of that CA). A CA is created once (ECDSA P-256, ten years) and
// kept in the state directory with its key readable by the owner only; serving, peer and client
// certificates are issued at every start, the serving ones for the loopback addresses.
//
// It must not know about clusters, Rancher or Kubernetes objects.
package pki
