// Package kubeenv starts a real Kubernetes control plane for tests: etcd, kube-apiserver and
// kube-controller-manager (resourcequota, serviceaccount, serviceaccount-token and namespace
// controllers) on free loopback ports, from binaries built once by scripts/kube/build.sh and
// cached outside the repo. It is a thin test wrapper over the virtual-clusters tool's launcher
// (internal/vclusters/controlplane, the one launcher): it finds the binaries, keeps etcd's data
// in tmpfs, retries a start whose port was taken, and shares one control plane per test binary.
//
// Use Start for a private control plane per test, or Shared for one per test binary (TestMain
// must then call Main). Tests skip with a clear message when the binaries are absent, unless
// SITE_AGENT_REQUIRE_REAL=1 (CI) makes that a failure. Processes run in their own process groups,
// die with the test binary (Linux parent-death signal) and are killed in cleanup.
//
// It is for tests only: product code must not import it.
package kubeenv
