//go:build tools

// Package kube pins the Kubernetes server commands that scripts/kube/build.sh compiles for the
// real-server test tier (internal/testenv/kubeenv). It is a separate module so that the product
// module never depends on k8s.io/kubernetes.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
