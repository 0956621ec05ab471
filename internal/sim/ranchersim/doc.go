// Package ranchersim is a strict, stateful simulator of the part of Rancher's v3 API that the
// rancher backend uses, in front of a real Kubernetes API server (from kubeenv in tests):
//
//   - GET /v3 (with the X-API-Schemas header: the agent's diagnostics check it is there) and
//     /v3/schemas, which schema-driven clients such as norman's clientbase read;
//   - clusters by id (and list), the caller's own token (/v3/tokens/<access key>);
//   - projects: list with filters (clusterId, name, id, …), limit=-1 or pages with
//     pagination.next, create, get, update (PUT), delete — each cluster has Rancher's Default
//     and System projects, a project's creator gets a project-owner binding, and a deleted
//     project stays listed as "removing" for a while, then goes with its bindings; the
//     namespaces Rancher made are deleted with it, the ones made through the proxy stay
//     (removal.go: what Rancher v2.12.0 does);
//   - projectroletemplatebindings: list with filters (roleTemplateId, projectId,
//     groupPrincipalId, …), create, get, delete (listed with `removed` for a while);
//   - /v3/clusters/<id>/namespaces: read and written through to the Kubernetes API server;
//   - /k8s/clusters/<id>/…: a reverse proxy to the Kubernetes API server, authenticated with
//     the Rancher token and forwarded with the server's admin token, 404 for unknown clusters;
//   - fleet-default's secrets through the v1 API, the Steve way (secrets.go), and what Rancher's
//     planner does with the registry secrets a provisioning cluster names (rkeconfig.go);
//   - the v1 provisioning API and v3 nodes of RKE2 clusters (provisioning.go, nodes.go), with
//     simulator-only stand-ins for what runs on the nodes: the system agent's registration
//     (RegisterEndpoint, clusters with an rkeConfig) and an imported cluster's agent reporting
//     its Nodes (ClusterAgentEndpoint, clusters without one; clusteragent.go), and Rancher's
//     /system-agent-install.sh (a script the test sets);
//   - with Options.Downstream, those clusters' Kubernetes API (/k8s proxy, Node-derived
//     capacity, downstream Nodes deleted with their v3 nodes; downstream.go).
//
// Authentication is what Rancher accepts for API keys: "Authorization: Bearer <access>:<secret>"
// or HTTP Basic with the same pair, on every request; anything else is 401.
//
// Strictness: unknown paths are 404 and wrong methods 405 (norman's error bodies); malformed
// JSON is 422 InvalidBodyContent, missing required fields 422 MissingRequired, wrong field
// types 422 InvalidFormat, references to unknown clusters, projects or role templates 422
// InvalidReference. Like norman, unknown body fields and unknown list filters are ignored, but
// they are recorded (Violations) so tests catch typos. Duplicate project names are accepted,
// as Rancher does, so tests can prove the client never makes two.
//
// Faults (HTTP 500/502/503/429 with Retry-After: 0, connection reset, lost response after the
// request was applied) are injected deterministically from a seed, per operation, after
// authentication; calls are counted per operation.
//
// It is test and demo support: product code must not import it, and it must not read anything
// outside the package.
package ranchersim
