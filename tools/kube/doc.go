// Package kube is a build-only module: its go.mod pins k8s.io/kubernetes and the matching staging
// modules, and tools.go (build tag "tools") names the commands scripts/kube/build.sh builds.
// Nothing here is imported by the product; do not add runtime code.
package kube
