// Package controlplane runs the main API server of the virtual clusters when the operator
// points the tool at binaries instead of a kubeconfig — seed 004's "ensure main cluster" step,
// done the way kwokctl's binary runtime does it: etcd, kube-apiserver and (optionally)
// kube-controller-manager as child processes on loopback ports, with their certificates, data
// and logs in one directory that survives restarts (the ports, CA, service-account key and admin
// token are created once and reused, so a restarted tool finds its clusters again).
//
// The controller manager runs the controllers the tool relies on (DefaultControllers):
// serviceaccount-token (fills the service-account token Secret the agent reads),
// serviceaccount, namespace (finishes namespace deletion), resourcequota, root-ca-cert-publisher
// and nodelifecycle. Without it, namespaces stay Terminating and the tool falls back to the
// TokenRequest API for agent tokens.
//
// It is the one launcher of a control plane in the repository: the tier-2 tests start theirs
// through internal/testenv/kubeenv, a thin wrapper over it (throwaway directories, etcd's data in
// tmpfs, their own controller set, a retry when a port picked free was taken: ErrPortTaken).
//
// It must not know about virtual clusters or Rancher.
package controlplane
