// Package rancher is the `rancher` backend: one Waldur resource is one Rancher project in a
// configured downstream cluster, with a namespace of the same name (pod-security labels plus the
// offering's namespace_labels, e.g. a GPU pool), a ResourceQuota `custom-resource-quota` built
// from the resource's limits, and, with Keycloak enabled, an OIDC group bound to the project
// through a ProjectRoleTemplateBinding. It is a drop-in for the incumbent Python plugin
// (`backend_type: rancher`, same settings, same object names except cluster-scoped group names
// for new resources) that also repairs drift on every membership pass, removes group bindings it
// did not make, pauses and downscales through the quota, keeps working on quotas and usage while
// Keycloak is down (only access changes wait), and retries transient upstream failures.
//
// Caches last one pass (invTTL): the cluster listing (Reconcile, Limits, Metadata, status), the
// project listing (Create) and each Keycloak group's member list (shared by every resource bound
// to the group). docs/rancher.md describes the behaviour for operators.
//
// Rancher's v3 API is reached through the shared client (internal/clients/rancher), which keeps
// the API key on backend_url; Kubernetes objects (namespaces, quotas, pods) through
// internal/kubeapi against Rancher's /k8s/clusters/<cluster> proxy, configured by that client
// with the same API token. Keycloak is reached through the keycloak package. Every call carries
// Authorization on its own (no login request).
//
// It must not talk to Waldur, make network calls in its constructor, or put credentials in
// errors or logs.
package rancher
