// Package rancherkccrd is the `rancher-kc-crd` membership backend: each Waldur resource is a
// Rancher downstream cluster (its backend_id is the cluster id) and each of its resource
// projects becomes one ManagedRancherProject custom resource (waldur.io/v1alpha1) in one
// namespace. An operator that is not ours (rancher-keycloak-operator) reconciles those into
// Rancher projects, Keycloak groups and role bindings and writes the custom resource's status;
// this backend writes only spec, reads status back and reports what it finds (per resource
// project, per grant, and as backend metadata). It removes custom resources of resource
// projects that no longer exist, selected by their waldur.io/resource-uuid label only.
//
// It implements backends.ProjectSyncer: the agent reads Waldur (resource projects and their
// role grants) and reports back; this package never sees Waldur. The pure parts (names,
// templates, the desired spec, status reading, grant states) are separate from the Kubernetes
// calls (kube.go), which go through internal/kubeapi.
//
// It must not import Waldur types, the configuration package or the modes.
package rancherkccrd
