// Package controlplane runs the main API server of the virtual clusters when the operator
// points the tool at binaries instead of a kubeconfig — seed 004's "ensure main cluster" step,
// done the way kwokctl's binary runtime does it: etcd, kube-apiserver and (optionally)
// kube-controller-manager as child processes on loopback ports, with their certificates, data
// and logs in one directory that survives restarts (the ports, CA, service-account key and admin
// token are created once and reused, so a restarted tool finds its clusters again).
//
// The controller manager runs the controllers the tool relies on: serviceaccount-token (fills
// the service-account token Secret the agent reads), serviceaccount, namespace (finishes
// namespace deletion), resourcequota and root-ca-cert-publisher. Without it, namespaces stay
// Terminating and the tool falls back to the TokenRequest API for agent tokens.
//
// It must not know about virtual clusters or Rancher.
package controlplane
