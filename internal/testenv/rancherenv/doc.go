// Package rancherenv connects tier-2 tests to the real Rancher v2.12.0 that scripts/rancher/up.sh
// starts on loopback (with its own etcd, kube-apiserver and kube-controller-manager). It reads
// the script's env file and offers an admin client for setting up and inspecting what the agent
// did: Rancher's v3 and v1 APIs and the Kubernetes API under Rancher. Tests only.
//
// The real Rancher needs its source to build (scripts/rancher/build.sh); where none can be had
// the test script skips the real-Rancher tests loudly and sets SITE_AGENT_RANCHER=0, which makes
// Load skip even with SITE_AGENT_REQUIRE_REAL=1.
package rancherenv
