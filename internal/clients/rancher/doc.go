// Package rancher is site-agent's one client for Rancher: the v3 API (clusters, projects,
// project and cluster role template bindings, nodes, API tokens), the v1 (Steve) provisioning
// API, cluster registration tokens and import manifests, and the configuration of the
// /k8s/clusters/<id> proxy that internal/kubeapi builds a Kubernetes client from. The rancher
// backend, the rke2 backend and the virtual-clusters tool all use it.
//
// Every request goes through one path (send, do.go): the API key as a bearer token, the
// retrying transport of internal/upstream with one policy (DefaultRetry and DefaultTimeout,
// overridden by the configuration's upstreams.rancher settings the caller passes in), POSTs
// repeated only when they cannot have been applied (callers look before they post again), and
// one classification into internal/failure: 5xx/429/408 and network failures transient, other
// statuses a *failure.StatusError, 404 also failure.ErrNotFound.
//
// The API key never leaves for another host. Requests are built from the configured URL only;
// links Rancher writes into answers (pagination.next, manifestUrl) are pinned to the configured
// scheme, host and port or refused (links.go), and the X-API-Schemas document, schema links and
// resource links are never followed: paths are the client's own.
//
// It takes plain values (URL, secret.Secret key, TLS options, upstream.Settings, a logger) and
// returns its own types: it must not import backends, the configuration, or anything above
// upstream, failure and secret. Tokens it hands out (registration tokens, manifest URLs,
// kubeconfig tokens) are secret.Secret.
package rancher
